"""Intervals: the mean with its Student-t interval, the jackknife SE, the upper confidence bound
on a spread and an interval kept inside a range (docs/method.md#uncertainty-over-seeds,
docs/method.md#bounded-intervals). Units are those of the values.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
from scipy.stats import chi2
from scipy.stats import t as student_t


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


def half_width(scale: float, n: int, confidence: float) -> float:
    """t_{(1+c)/2, n−1} · scale: the half-width of a two-sided t-interval at level c over n
    replicates, `scale` the standard error (or, divided by √n after, the sample sd). Works on
    arrays of scales too."""
    return t_quantile(confidence, n) * scale


def t_interval(values: np.ndarray, confidence: float) -> Interval:
    """Mean and Student-t interval of the finite entries of `values` (NaN entries dropped).

    n = 0 gives an all-NaN Interval; n = 1 gives the value with no interval (one seed has no
    spread); equal values give a zero-width interval.
    """
    values = np.asarray(values, dtype=np.float64).ravel()
    finite = values[np.isfinite(values)]
    n = int(finite.size)
    if n == 0:
        return Interval.point(math.nan, 0)
    mean = float(finite.mean())
    if n == 1:
        return Interval.point(mean, 1)
    half = half_width(float(finite.std(ddof=1)), n, confidence) / math.sqrt(n)
    return Interval(mean, mean - half, mean + half, n)


def t_bounds(mean: float, se: float, n: int, confidence: float) -> tuple[float, float]:
    """mean ± t_{(1+c)/2, n−1} · se; NaN bounds with n < 2 or an undefined mean or SE."""
    if n < 2 or not (math.isfinite(mean) and math.isfinite(se)):
        return math.nan, math.nan
    half = half_width(se, n, confidence)
    return mean - half, mean + half


def mean_se(values: np.ndarray) -> tuple[float, float, int]:
    """(mean, SE = s/√n, n) of the finite entries of `values`: the replicates of one estimate
    (seeds, or per-base means); SE NaN with fewer than 2, mean NaN with none."""
    d = np.asarray(values, dtype=np.float64).ravel()
    d = d[np.isfinite(d)]
    n = int(d.size)
    se = float(d.std(ddof=1)) / math.sqrt(n) if n >= 2 else math.nan
    return (float(d.mean()) if n else math.nan), se, n


def paired_differences(variant: np.ndarray, baseline: np.ndarray) -> np.ndarray:
    """Per-seed differences variant − baseline (n,), the seeds aligned by position.

    A seed where either side is undefined (NaN) gives NaN, which `t_interval` then drops.
    """
    a = np.asarray(variant, dtype=np.float64)
    b = np.asarray(baseline, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"paired values need one (n,) shape, got {a.shape} and {b.shape}")
    return a - b


def jackknife_se(replicates: Sequence[float]) -> float:
    """The leave-one-out jackknife SE from the n replicates θ_(j) (the estimate without
    replicate j): SE² = (n−1)/n · Σ (θ_(j) − θ̄)²; NaN with n < 2."""
    theta = np.asarray(replicates, dtype=np.float64)
    n = theta.size
    if n < 2:
        return math.nan
    return math.sqrt((n - 1) / n * float(((theta - theta.mean()) ** 2).sum()))


def jackknife(
    estimate: float, replicates: Sequence[float], confidence: float
) -> tuple[Interval, float]:
    """`estimate` with its jackknife interval, estimate ± t_{(1+c)/2, n−1} · SE over the n
    leave-one-out `replicates` (`jackknife_se`). Returns (interval, SE); no interval with an
    undefined estimate or n < 2."""
    n = len(replicates)
    if not math.isfinite(estimate) or n < 2:
        return Interval.point(estimate, n), math.nan
    se = jackknife_se(replicates)
    half = half_width(se, n, confidence)
    return Interval(estimate, estimate - half, estimate + half, n), se


def spread_upper_bound(sd: float, n: int, level: float) -> float:
    """The one-sided `level` upper confidence bound on σ from a sample sd of n values (n − 1
    degrees of freedom): sd · √((n−1) / χ²_{1−level, n−1}); NaN with n < 2."""
    if n < 2 or not math.isfinite(sd):
        return math.nan
    return sd * math.sqrt((n - 1) / float(chi2.ppf(1.0 - level, df=n - 1)))


def clip(stats: Interval, low: float, high: float) -> Interval:
    """`stats` with its interval intersected with [low, high], the range the true mean cannot
    leave (so the coverage is kept); a value with no interval is returned as it is."""
    if not stats.has_interval:
        return stats
    return replace(stats, low=min(max(stats.low, low), high), high=max(min(stats.high, high), low))
