"""`Memory.attend` in its earlier forms, for the study bench to time against the library's:
two fused attention calls, and the one score matrix with torch's softmax and logsumexp
(docs/performance.md#memory-attention). Each gives the library's values (a test holds them)."""

from __future__ import annotations

from unittest import mock

import torch
import torch.nn.functional as F
from torch import Tensor

from zgain.base import model as base_model
from zgain.base.model import Memory


def two_fused_calls(memory: Memory, q: Tensor, k: Tensor, v: Tensor, dropout: float) -> Tensor:
    """`Memory.attend` as two fused attention calls (the causal one and the joint one over
    [slot, causal keys] with a mask), mixed by the gate: the same value, the earlier form."""
    seq = q.shape[2]
    causal = F.scaled_dot_product_attention(q, k, v, dropout_p=dropout, is_causal=True)
    allowed = torch.ones(seq, seq + 1, dtype=torch.bool)
    allowed[:, 1:] = torch.ones(seq, seq, dtype=torch.bool).tril()
    keys, values = torch.cat([memory.keys, k], dim=2), torch.cat([memory.values, v], dim=2)
    joint = F.scaled_dot_product_attention(q, keys, values, attn_mask=allowed, dropout_p=dropout)
    gate = torch.tanh(memory.gate)[None, :, None, None]
    return causal + gate * (joint - causal)


def torch_softmax_and_log_normalizer(scores: Tensor) -> tuple[Tensor, Tensor]:
    """The causal weights from torch's softmax and ℓ from its logsumexp: two passes over the
    scores, the earlier form of `softmax_and_log_normalizer`."""
    return scores.softmax(dim=-1), scores.logsumexp(dim=-1, keepdim=True)


LIBRARY_ATTEND = Memory.attend
"""`Memory.attend` as the library defines it (the levers patch the class attribute)."""


def torch_softmax_attend(memory: Memory, q: Tensor, k: Tensor, v: Tensor, dropout: float) -> Tensor:
    """`Memory.attend` with its weights and ℓ from torch's softmax and logsumexp."""
    with mock.patch.object(
        base_model, "softmax_and_log_normalizer", torch_softmax_and_log_normalizer
    ):
        return LIBRARY_ATTEND(memory, q, k, v, dropout)
