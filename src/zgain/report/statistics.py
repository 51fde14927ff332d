"""The report's statistics, one definition each for the report, the sweep report, `zgain check`
and bench/: the t interval and half-width, the verdict rule (`decide`: p → Holm → TOST →
`classify`, docs/method.md#verdicts), the power of the two-sided t-test with its searches, and
the upper confidence bound on a spread. Seeds are the replicates
(docs/method.md#uncertainty-over-seeds).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq
from scipy.stats import chi2, nct
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
    half = half_width(float(finite.std(ddof=1)), n, confidence) / math.sqrt(n)
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


def half_width(scale: float, n: int, confidence: float) -> float:
    """t_{(1+c)/2, n−1} · scale: the half-width of a two-sided t-interval at level c over n
    replicates, `scale` the standard error (or, divided by √n after, the sample sd). Works on
    arrays of scales too. The one t half-width of the report, the sweep report and `zgain check`."""
    return t_quantile(confidence, n) * scale


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


def t_p_value(mean: float, se: float, n: int) -> float:
    """Two-sided p of mean/SE against t_{n−1}; 0 or 1 with zero SE; NaN with n < 2."""
    if n < 2 or not (math.isfinite(mean) and math.isfinite(se)):
        return math.nan
    if se == 0.0:
        return 0.0 if mean != 0.0 else 1.0
    return float(2.0 * student_t.sf(abs(mean / se), df=n - 1))


def paired_p(diffs: np.ndarray) -> float:
    """Two-sided p-value of the paired t-test that the mean of the finite `diffs` is 0.

    NaN with fewer than 2 values; with zero spread, 0 for a nonzero mean and 1 for a zero one.
    """
    return t_p_value(*mean_se(diffs))


def alpha_of(confidence: float) -> float:
    """α = 1 − c, the level of the tests that go with intervals at level c (rounded to 12
    places so that c = 0.95 gives α = 0.05 exactly)."""
    return round(1.0 - confidence, 12)


# The verdict rule (docs/method.md#verdicts)

MIN_SEEDS = 3  # fewer replicates than this: every verdict is undetermined
BETTER, WORSE, EQUIVALENT, UNDETERMINED = "better", "worse", "equivalent", "undetermined"


@dataclass(frozen=True)
class Evidence:
    """One comparison's estimate (mean of n replicates), two-sided p against 0 and the
    (1 − 2α) TOST interval."""

    mean: float
    n: int
    p: float
    tost_low: float
    tost_high: float

    @classmethod
    def of_se(cls, mean: float, se: float, n: int, confidence: float) -> Evidence:
        """From a mean and its SE over n replicates (a jackknife SE, or s/√n)."""
        tost = t_bounds(mean, se, n, 1.0 - 2.0 * alpha_of(confidence))
        return cls(mean, n, t_p_value(mean, se, n), *tost)

    @classmethod
    def of_values(cls, values: np.ndarray, confidence: float) -> Evidence:
        """From the replicates themselves (their t-interval and paired t-test)."""
        tost = t_interval(values, 1.0 - 2.0 * alpha_of(confidence))
        return cls(tost.mean, tost.n, paired_p(values), tost.low, tost.high)


def holm(pvalues: Sequence[float]) -> np.ndarray:
    """Holm's step-down adjusted p-values (m,): the k-th smallest of the m finite p-values gets
    max_{j ≤ k} min(1, (m − j + 1) · p_(j)); NaN entries stay NaN and do not count in m."""
    p = np.asarray(pvalues, dtype=np.float64)
    adjusted = np.full(p.shape, math.nan)
    finite = np.flatnonzero(np.isfinite(p))
    order = finite[np.argsort(p[finite], kind="stable")]
    m, running = order.size, 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[index]))
        adjusted[index] = running
    return adjusted


def classify(
    tost_low: float,
    tost_high: float,
    mean: float,
    p_holm: float,
    n: int,
    delta: float,
    alpha: float,
) -> str:
    """The verdict from the TOST interval, the mean and the Holm-adjusted p, in this order:
    `equivalent` when the interval lies inside ±δ (whatever the test says), `better` / `worse`
    when p_holm < α, else (or with fewer than MIN_SEEDS replicates) `undetermined`."""
    if n < MIN_SEEDS or not math.isfinite(mean):
        return UNDETERMINED
    if -delta < tost_low and tost_high < delta:
        return EQUIVALENT
    if math.isfinite(p_holm) and p_holm < alpha:
        return BETTER if mean > 0 else WORSE
    return UNDETERMINED


def decide(family: Sequence[Evidence], delta: float, confidence: float) -> list[tuple[float, str]]:
    """The report's one rule over one family of comparisons: (Holm-adjusted p, verdict) each,
    Holm over the family's p-values, then `classify` at α = 1 − confidence and margin ±δ."""
    adjusted = holm([e.p for e in family])
    alpha = alpha_of(confidence)
    return [
        (float(ph), classify(e.tost_low, e.tost_high, e.mean, ph, e.n, delta, alpha))
        for e, ph in zip(family, adjusted, strict=True)
    ]


# Power and sample size of the two-sided t-test

SEEDS_CAP = 100  # sample-size searches stop here
POWER = 0.8  # the power the sample-size and detectable-difference searches aim at


def t_test_power(noncentrality: float, n: int, confidence: float) -> float:
    """P(|T| > t_{(1+c)/2, n−1}) for T ~ nct(n − 1, noncentrality): the power of the two-sided
    t-test over n replicates at level 1 − c when the true mean is noncentrality · SE.

    The lower tail P(T < −t) is taken as P(T' > t), T' ~ nct(n − 1, −noncentrality) (the same
    by symmetry): scipy's nct.cdf far in the lower tail can return NaN where nct.sf does not.
    """
    df = n - 1
    critical = t_quantile(confidence, n)
    return float(nct.sf(critical, df, noncentrality) + nct.sf(critical, df, -noncentrality))


def smallest_n(meets: Callable[[int], bool], first: int, cap: int = SEEDS_CAP) -> int | None:
    """The smallest n in [first, cap] for which `meets(n)` holds (None when none does): the
    one sample-size search (replicates for a power, seeds for a half-width)."""
    return next((n for n in range(first, cap + 1) if meets(n)), None)


def detectable_noncentrality(n: int, confidence: float, power: float) -> float:
    """The noncentrality |Δ|/SE at which the two-sided t-test over n replicates at level 1 − c
    has probability `power` of rejecting; 0 when power ≤ 1 − c (Δ = 0 already rejects that
    often)."""
    if not 0.0 < power < 1.0:
        raise ValueError(f"power must be in (0, 1), got {power}")
    if power <= t_test_power(0.0, n, confidence):
        return 0.0

    def shortfall(noncentrality: float) -> float:
        return t_test_power(noncentrality, n, confidence) - power

    high = t_quantile(confidence, n) + 1.0
    while shortfall(high) < 0.0:
        high *= 2.0
    return float(brentq(shortfall, 0.0, high, xtol=1e-12, rtol=1e-12))


def spread_upper_bound(sd: float, n: int, level: float) -> float:
    """The one-sided `level` upper confidence bound on σ from a sample sd of n values (n − 1
    degrees of freedom): sd · √((n−1) / χ²_{1−level, n−1}); NaN with n < 2."""
    if n < 2 or not math.isfinite(sd):
        return math.nan
    return sd * math.sqrt((n - 1) / float(chi2.ppf(1.0 - level, df=n - 1)))
