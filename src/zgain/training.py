"""Pieces every training loop shares: torch set-up, minibatches, the LR schedule, finiteness."""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping

import torch
from torch import Tensor

from zgain.sequences import SeqBatch


class NonFiniteLossError(FloatingPointError):
    """A loss term became NaN or infinite; the message names the step and the term."""


def configure_torch(threads: int, seed: int) -> None:
    """Seed torch and fix its CPU thread count (0 keeps torch's default)."""
    if threads > 0:
        torch.set_num_threads(threads)
    torch.manual_seed(seed)
    torch.use_deterministic_algorithms(True, warn_only=True)


def lr_at(
    step: int, *, peak: float, warmup_steps: int, total_steps: int, min_ratio: float
) -> float:
    """Linear warm-up to `peak` over `warmup_steps`, then cosine decay to `min_ratio * peak`."""
    if warmup_steps > 0 and step < warmup_steps:
        return peak * (step + 1) / warmup_steps
    span = max(total_steps - warmup_steps, 1)
    progress = min(max(step - warmup_steps, 0) / span, 1.0)
    return peak * (min_ratio + (1.0 - min_ratio) * 0.5 * (1.0 + math.cos(math.pi * progress)))


def minibatches(n: int, batch_size: int, generator: torch.Generator) -> Iterator[Tensor]:
    """Endless shuffled index batches over n examples (each epoch a fresh permutation)."""
    while True:
        order = torch.randperm(n, generator=generator)
        for start in range(0, n - batch_size + 1 if n >= batch_size else 1, batch_size):
            yield order[start : start + batch_size]


def chunks(n: int, batch_size: int) -> Iterator[slice]:
    """Consecutive slices covering 0..n (evaluation order)."""
    for start in range(0, n, batch_size):
        yield slice(start, min(start + batch_size, n))


def select(batch: SeqBatch, index: Tensor | slice) -> SeqBatch:
    """The rows `index` of every tensor of a packed batch."""
    return SeqBatch(*(t[index] for t in batch))


def check_finite(step: int, terms: Mapping[str, float]) -> None:
    """Stop training at the first non-finite term, naming the step and the term."""
    for name, value in terms.items():
        if not math.isfinite(value):
            raise NonFiniteLossError(
                f"step {step}: loss term {name!r} is {value}; training stopped"
            )
