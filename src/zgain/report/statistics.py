"""Statistics over seeds and paired tests (docs/method.md#uncertainty-over-seeds)."""

from __future__ import annotations

import math

import numpy as np
from scipy.stats import bootstrap, wilcoxon

from zgain.core.arrays import as_vector

MIN_WILCOXON_NONZERO: int = 2
"""With fewer non-zero paired differences the signed-rank p-value is 1 by construction."""


def bootstrap_ci(
    values: np.ndarray, *, confidence: float = 0.95, seed: int, n_resamples: int = 2000
) -> tuple[float, float, float]:
    """Mean of ``values`` (n,) and its percentile-bootstrap confidence interval (mean, low, high).

    Percentile rather than BCa: the typical sample here is a handful of seeds, where BCa's
    jackknife acceleration is unstable or undefined. A degenerate sample (n = 1 or all
    values equal) has no spread and returns (v, v, v).
    """
    values = as_vector("values", values)
    if values.size == 0:
        raise ValueError("bootstrap_ci needs at least one value")
    mean = float(values.mean())
    if values.size == 1 or np.ptp(values) == 0.0:
        return mean, mean, mean
    result = bootstrap(
        (values,),
        np.mean,
        n_resamples=n_resamples,
        confidence_level=confidence,
        method="percentile",
        rng=np.random.default_rng(seed),
    )
    return mean, float(result.confidence_interval.low), float(result.confidence_interval.high)


def paired_wilcoxon(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """Two-sided Wilcoxon signed-rank test of paired samples a, b (n,): (statistic, p-value).

    Zero differences are dropped (``zero_method="wilcox"``). Returns (nan, nan) when fewer
    than MIN_WILCOXON_NONZERO differences are non-zero — identical samples, or n too small
    for the test to say anything.
    """
    a, b = as_vector("a", a), as_vector("b", b)
    if a.shape != b.shape:
        raise ValueError(f"a and b must share a shape, got {a.shape}, {b.shape}")
    if np.count_nonzero(a - b) < MIN_WILCOXON_NONZERO:
        return math.nan, math.nan
    result = wilcoxon(a, b)
    return float(result.statistic), float(result.pvalue)
