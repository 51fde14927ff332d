"""Intervals over seeds: the seeds are the replicates (docs/method.md#uncertainty-over-seeds).

A run's metric is a mean over the test examples of one trained model; the report treats the n
seed values of a variant as an i.i.d. sample of the training procedure and gives their mean with
a two-sided Student-t interval, mean ± t_{(1+c)/2, n−1} · s / √n, s the sample standard
deviation (ddof 1). Paired comparisons use the same interval on per-seed differences.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from scipy.stats import t as student_t

if TYPE_CHECKING:
    from zgain.report.loading import EvalResults


@dataclass(frozen=True)
class Interval:
    """Mean of the n finite values and its t-interval; low = high = NaN when n < 2."""

    mean: float
    low: float
    high: float
    n: int

    @property
    def has_interval(self) -> bool:
        """True when there is an interval (n ≥ 2, so the spread over seeds is estimable)."""
        return math.isfinite(self.low) and math.isfinite(self.high)

    @classmethod
    def point(cls, mean: float, n: int) -> Interval:
        """A value with no interval: a reference fixed by the test split, or one seed."""
        return cls(mean, math.nan, math.nan, n)

    @classmethod
    def of(cls, row: Mapping) -> Interval:
        """The interval of a table row with `mean`, `low`, `high` (and `n`, 0 when absent)."""
        return cls(float(row["mean"]), float(row["low"]), float(row["high"]), int(row.get("n", 0)))

    def row(self) -> dict[str, float | int]:
        """The columns `mean`, `low`, `high`, `n` of every interval table."""
        return {"mean": self.mean, "low": self.low, "high": self.high, "n": self.n}

    def excludes(self, value: float) -> bool:
        """True when the interval exists and `value` lies outside it (a separation)."""
        return self.has_interval and math.isfinite(value) and not self.low <= value <= self.high


def finite_mean(values: np.ndarray) -> float:
    """Mean of the finite entries of `values` (NaN when there are none); units of `values`."""
    values = np.asarray(values, dtype=np.float64).ravel()
    finite = values[np.isfinite(values)]
    return float(finite.mean()) if finite.size else math.nan


def t_quantile(confidence: float, n: int) -> float:
    """t_{(1+c)/2, n−1}: the two-sided Student-t quantile for n ≥ 2 values at level c."""
    if n < 2:
        raise ValueError(f"a t-interval needs at least 2 values, got {n}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    return float(student_t.ppf(0.5 + confidence / 2.0, df=n - 1))


def t_interval(values: np.ndarray, confidence: float) -> Interval:
    """Mean and Student-t interval of the finite entries of `values` (NaN entries dropped).

    Units are those of `values`. n = 0 gives an all-NaN Interval; n = 1 gives the value with no
    interval (one seed has no spread); equal values give a zero-width interval.
    """
    values = np.asarray(values, dtype=np.float64).ravel()
    finite = values[np.isfinite(values)]
    n = int(finite.size)
    if n == 0:
        return Interval.point(math.nan, 0)
    mean = float(finite.mean())
    if n == 1:
        return Interval.point(mean, 1)
    half = t_quantile(confidence, n) * float(finite.std(ddof=1)) / math.sqrt(n)
    return Interval(mean, mean - half, mean + half, n)


def paired_differences(variant: np.ndarray, baseline: np.ndarray) -> np.ndarray:
    """Per-seed differences variant − baseline (n,), the seeds aligned by position.

    A seed where either side is undefined (NaN) gives NaN, which `t_interval` then drops.
    """
    a = np.asarray(variant, dtype=np.float64)
    b = np.asarray(baseline, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"paired values need one (n,) shape, got {a.shape} and {b.shape}")
    return a - b


def paired_row(
    results: EvalResults, a: str, b: str, metric: str, confidence: float
) -> dict[str, float | int | bool | None]:
    """The seed-paired comparison a − b on `metric`: the mean and t-interval of the per-seed
    differences, and `separated` (the interval excludes 0; None without an interval)."""
    diffs = paired_differences(results.values(a, metric), results.values(b, metric))
    stats = t_interval(diffs, confidence)
    return {**stats.row(), "separated": stats.excludes(0.0) if stats.has_interval else None}


def method_label(n_seeds: int, confidence: float) -> str:
    """How every cell over seeds was computed, for table and figure captions."""
    if n_seeds == 1:
        return "one seed: the value of that seed, no interval (one seed has no spread)"
    return f"mean over {n_seeds} seeds, {percent(confidence)} t-interval"


def percent(confidence: float) -> str:
    """0.95 -> '95%', 0.975 -> '97.5%'."""
    return f"{confidence * 100:g}%"
