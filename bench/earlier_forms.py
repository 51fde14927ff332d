"""The train step's earlier forms, for the study bench to time against the library's: memory
attention as two fused calls or with torch's softmax and logsumexp
(docs/performance.md#memory-attention), a reader pass per encoder, the decoder's last block on
every position, and `use_earlier_step`, the step before the study engine. Each gives the
library's values (tests hold them)."""

from __future__ import annotations

from unittest import mock

import torch
import torch.nn.functional as F
from torch import Tensor

from zgain.base import model as base_model
from zgain.base.model import Memory, causal_mask
from zgain.core.sequences import SeqBatch
from zgain.cvae.fit import ReaderFeatures
from zgain.cvae.model import CVAE


def two_fused_calls(memory: Memory, q: Tensor, k: Tensor, v: Tensor, dropout: float) -> Tensor:
    """`Memory.attend` as two fused attention calls (the causal one and the joint one over
    [slot, causal keys] with a mask), mixed by the gate: the same value, the earlier form.
    The queries may be the last rows of the keys' positions, as `Memory.attend` takes them."""
    queries, seq = q.shape[2], k.shape[2]
    mask = None if queries == seq else causal_mask(queries, seq, q.device)
    causal = F.scaled_dot_product_attention(
        q, k, v, attn_mask=mask, dropout_p=dropout, is_causal=mask is None
    )
    allowed = torch.ones(queries, seq + 1, dtype=torch.bool)
    allowed[:, 1:] = causal_mask(queries, seq, q.device)
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


def separate_reader_passes(model: CVAE, part: SeqBatch) -> ReaderFeatures:
    """The reader's features as one pass per encoder input, the form before one pass served
    both (`ReaderFeatures.of`)."""
    return ReaderFeatures(
        model.base_features(part.encoder_input), model.base_features(part.prior_input)
    )


LIBRARY_DECODE = CVAE.decode
"""`CVAE.decode` as the library defines it."""


def whole_pass_decode(model: CVAE, decoder_input: Tensor, z: Tensor, first: int = 0) -> Tensor:
    """`CVAE.decode` with the last block on every position, sliced afterwards: the same logits,
    the form before the last block worked on the kept rows alone."""
    return LIBRARY_DECODE(model, decoder_input, z)[:, first:]


def use_earlier_step() -> None:
    """Give this process the train step as it was before the study engine: Adam's per-tensor
    loop, a reader pass per encoder, the decoder's last block on every position, memory
    attention as two fused calls (the first form of the memory slot, which came after the
    one-run stages). For a stage process's prelude."""
    import zgain.cvae.fit as fit

    fit.fused_adam = lambda device: False
    ReaderFeatures.of = classmethod(lambda cls, model, part: separate_reader_passes(model, part))
    CVAE.decode = whole_pass_decode
    Memory.attend = two_fused_calls
