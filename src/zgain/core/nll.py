"""Masked per-token negative log-likelihood and masked reductions: the unreduced surprisal.

Shapes: B examples, T target positions, V vocabulary. Values are in nats.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

PLACEHOLDER_TARGET = 0
"""Stand-in target at unsupervised positions: any in-vocabulary id works, its loss is discarded."""


def token_nll(logits: Tensor, targets: Tensor, mask: Tensor) -> Tensor:
    """Per-token negative log-likelihood in nats.

    logits (B, T, V), targets (B, T) int64, mask (B, T) bool -> (B, T), 0 where mask is False.
    Targets at unsupervised positions may hold any id (PAD, or even out of range).
    """
    if logits.dim() != 3 or targets.shape != logits.shape[:2] or mask.shape != targets.shape:
        shapes = [tuple(t.shape) for t in (logits, targets, mask)]
        raise ValueError(f"need logits (B, T, V), targets and mask (B, T); got shape {shapes}")
    safe_targets = torch.where(mask, targets, PLACEHOLDER_TARGET)
    nll = F.cross_entropy(logits.transpose(1, 2), safe_targets, reduction="none")  # (B, T)
    return torch.where(mask, nll, 0.0)


def masked_sum(values: Tensor, mask: Tensor) -> Tensor:
    """Sum over supervised positions: values (B, T), mask (B, T) bool -> (B,), same units."""
    return torch.where(mask, values, 0.0).sum(dim=1)


def masked_mean(values: Tensor, mask: Tensor) -> Tensor:
    """Mean over supervised positions (T_i = mask.sum(1)): (B, T), (B, T) bool -> (B,)."""
    return masked_sum(values, mask) / mask.sum(dim=1).to(values.dtype)
