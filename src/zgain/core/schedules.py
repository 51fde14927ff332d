"""Learning-rate schedules: pure functions of the optimisation step."""

from __future__ import annotations

import math


def lr_at(
    step: int, *, peak: float, warmup_steps: int, total_steps: int, min_ratio: float
) -> float:
    """Linear warm-up to `peak` over `warmup_steps`, then cosine decay to `min_ratio * peak`."""
    if warmup_steps > 0 and step < warmup_steps:
        return peak * (step + 1) / warmup_steps
    span = max(total_steps - warmup_steps, 1)
    progress = min(max(step - warmup_steps, 0) / span, 1.0)
    return peak * (min_ratio + (1.0 - min_ratio) * 0.5 * (1.0 + math.cos(math.pi * progress)))
