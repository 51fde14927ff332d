"""The learning-rate schedule (zgain.core.schedules): linear warm-up, then cosine decay."""

from __future__ import annotations

import math

import pytest

from zgain.core.schedules import lr_at

PEAK, WARMUP, TOTAL, FLOOR = 0.01, 4, 14, 0.1


def lr(step: int) -> float:
    return lr_at(step, peak=PEAK, warmup_steps=WARMUP, total_steps=TOTAL, min_ratio=FLOOR)


def test_warm_up_is_linear_and_reaches_the_peak_at_its_last_step() -> None:
    assert [lr(s) for s in range(WARMUP)] == pytest.approx(
        [PEAK * k / WARMUP for k in (1, 2, 3, 4)]
    )


def test_cosine_decay_from_the_peak_to_the_floor() -> None:
    assert lr(WARMUP) == pytest.approx(PEAK)
    half = WARMUP + (TOTAL - WARMUP) // 2  # progress 1/2: cos = 0, halfway to the floor
    assert lr(half) == pytest.approx(PEAK * (FLOOR + (1 - FLOOR) * 0.5))
    assert lr(TOTAL) == pytest.approx(PEAK * FLOOR)
    assert lr(TOTAL + 50) == pytest.approx(PEAK * FLOOR)  # stays at the floor past the end
    decay = [lr(s) for s in range(WARMUP, TOTAL + 1)]
    assert all(a > b for a, b in zip(decay, decay[1:], strict=False))


def test_no_warm_up_starts_at_the_peak() -> None:
    first = lr_at(0, peak=PEAK, warmup_steps=0, total_steps=TOTAL, min_ratio=FLOOR)
    assert first == pytest.approx(PEAK)
    assert math.isfinite(lr_at(0, peak=PEAK, warmup_steps=0, total_steps=0, min_ratio=FLOOR))
