"""The verdict rule (docs/method.md#verdicts): each comparison's two-sided p against 0, Holm over
its family, the TOST interval at level 1 − 2α inside ±δ, then the verdict (`decide`). α = 1 − c
for intervals at level c; seeds (or bases) are the replicates.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import t as student_t

from zgain.stats.intervals import mean_se, t_bounds, t_interval

MIN_SEEDS = 3  # fewer replicates than this: every verdict is undetermined
BETTER, WORSE, EQUIVALENT, UNDETERMINED = "better", "worse", "equivalent", "undetermined"


def alpha_of(confidence: float) -> float:
    """α = 1 − c, the level of the tests that go with intervals at level c (rounded to 12
    places so that c = 0.95 gives α = 0.05 exactly)."""
    return round(1.0 - confidence, 12)


def tost_level(confidence: float) -> float:
    """1 − 2α: the level of the TOST interval that goes with intervals at level c (0.90 at
    c = 0.95); the one place this level is defined."""
    return 1.0 - 2.0 * alpha_of(confidence)


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
        tost = t_bounds(mean, se, n, tost_level(confidence))
        return cls(mean, n, t_p_value(mean, se, n), *tost)

    @classmethod
    def of_values(cls, values: np.ndarray, confidence: float) -> Evidence:
        """From the replicates themselves (their t-interval and paired t-test)."""
        tost = t_interval(values, tost_level(confidence))
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
    """The one rule over one family of comparisons: (Holm-adjusted p, verdict) each, Holm over
    the family's p-values, then `classify` at α = 1 − confidence and margin ±δ."""
    adjusted = holm([e.p for e in family])
    alpha = alpha_of(confidence)
    return [
        (float(ph), classify(e.tost_low, e.tost_high, e.mean, ph, e.n, delta, alpha))
        for e, ph in zip(family, adjusted, strict=True)
    ]
