"""The variance components of a one-way random-effects layout (bases × seeds): the method-of-moments
estimates with one-sided upper bounds (any layout), and two-sided intervals (balanced).

y_{b,s} = μ + β_b + ε_{b,s}, b = 1..B bases, s = 1..k seeds on each, β_b ~ N(0, σ_B²) and
ε_{b,s} ~ N(0, σ_W²). With MS_W the within mean square (B(k − 1) degrees of freedom) and MS_B
the between mean square (B − 1), σ_W² is estimated by MS_W and σ_B² by (MS_B − MS_W)/k.
σ_W's interval is the exact χ² one; σ_B's is the modified large-sample (MLS) interval of
Graybill and Wang for a difference of mean squares (Burdick & Graybill, *Confidence Intervals on
Variance Components*, 1992, §3.2), whose coverage stays near nominal even with few bases.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import chi2, f

from zgain.stats.intervals import spread_upper_bound


@dataclass(frozen=True)
class VarianceComponents:
    """σ_B, σ_W (units of the values), the degrees of freedom of the pooled σ_W², and each σ's
    one-sided upper confidence bound (NaN where undefined)."""

    sigma_b: float
    sigma_w: float
    df_w: int
    sigma_b_upper: float = math.nan
    sigma_w_upper: float = math.nan

    @property
    def separable(self) -> bool:
        """True when some base has ≥ 2 replicates, so σ_W (and σ_B apart from it) is estimable."""
        return self.df_w > 0


def components_of_moments(
    sizes: np.ndarray, means: np.ndarray, variances: np.ndarray, confidence: float
) -> VarianceComponents:
    """Method-of-moments σ_B and σ_W of y_{b,s} = μ + β_b + ε_{b,s} from each base's replicate
    count k_b, mean and sample variance (ddof 1), with χ² upper bounds at level `confidence`.

    σ_W² pools the bases with k_b ≥ 2 (the within mean square, NaN when none); σ_B² is the
    variance of the per-base means less the mean of σ_W²/k_b, clipped at 0 (balanced: (MS_B −
    MS_W)/k); NaN with fewer than 2 bases. A NaN σ_W counts as 0 in σ_B. σ_B's bound is the
    χ² bound on the spread of the per-base means (which holds σ_B² + σ_W²/k, so it is a
    conservative bound on σ_B).
    """
    k = np.asarray(sizes, dtype=np.float64)
    means = np.asarray(means, dtype=np.float64)
    variances = np.asarray(variances, dtype=np.float64)
    pooled = k >= 2
    df_w = int((k[pooled] - 1).sum())
    var_w = float(((k[pooled] - 1) * variances[pooled]).sum() / df_w) if df_w else math.nan
    w_upper = spread_upper_bound(math.sqrt(var_w), df_w + 1, confidence)
    if means.size < 2:
        return VarianceComponents(math.nan, math.sqrt(var_w), df_w, math.nan, w_upper)
    expected_w = float(np.mean((0.0 if math.isnan(var_w) else var_w) / k))
    var_b = max(0.0, float(means.var(ddof=1)) - expected_w)
    b_upper = spread_upper_bound(float(means.std(ddof=1)), means.size, confidence)
    return VarianceComponents(math.sqrt(var_b), math.sqrt(var_w), df_w, b_upper, w_upper)


def variance_components(groups: Sequence[np.ndarray], confidence: float) -> VarianceComponents:
    """`components_of_moments` of the finite values of each base's replicates (`groups`, one
    array per base; a base with no finite value is dropped)."""
    kept = [g[np.isfinite(g)] for g in (np.asarray(g, dtype=np.float64) for g in groups)]
    kept = [g for g in kept if g.size]
    sizes = np.array([g.size for g in kept], dtype=np.float64)
    means = np.array([g.mean() for g in kept])
    variances = np.array([g.var(ddof=1) if g.size > 1 else math.nan for g in kept])
    return components_of_moments(sizes, means, variances, confidence)


@dataclass(frozen=True)
class ComponentIntervals:
    """σ_B and σ_W (units of the values) with two-sided intervals at `confidence`."""

    bases: int
    seeds: int
    ms_between: float
    ms_within: float
    sigma_b: float
    sigma_b_low: float
    sigma_b_high: float
    sigma_w: float
    sigma_w_low: float
    sigma_w_high: float
    confidence: float


def component_intervals(values: np.ndarray, confidence: float) -> ComponentIntervals:
    """values (B, k): k ≥ 2 replicates on each of B ≥ 2 bases, all finite."""
    y = np.asarray(values, dtype=np.float64)
    if y.ndim != 2 or y.shape[0] < 2 or y.shape[1] < 2:
        raise ValueError(f"need a (bases ≥ 2, seeds ≥ 2) array, got shape {y.shape}")
    if not np.isfinite(y).all():
        raise ValueError("every value must be finite")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    bases, seeds = y.shape
    n_b, n_w = bases - 1, bases * (seeds - 1)
    means, variances = y.mean(axis=1), y.var(axis=1, ddof=1)
    ms_b, ms_w = seeds * float(means.var(ddof=1)), float(variances.mean())
    point = components_of_moments(np.full(bases, float(seeds)), means, variances, confidence)
    alpha = (1.0 - confidence) / 2.0
    # σ_W²: n_w MS_W / σ_W² ~ χ²_{n_w}
    w_low = math.sqrt(n_w * ms_w / chi2.ppf(1.0 - alpha, n_w))
    w_high = math.sqrt(n_w * ms_w / chi2.ppf(alpha, n_w))
    b_low, b_high = mls_difference(ms_b, n_b, ms_w, n_w, 1.0 / seeds, alpha)
    return ComponentIntervals(
        bases,
        seeds,
        ms_b,
        ms_w,
        point.sigma_b,
        math.sqrt(max(b_low, 0.0)),
        math.sqrt(max(b_high, 0.0)),
        point.sigma_w,
        w_low,
        w_high,
        confidence,
    )


def mls_difference(
    s1: float, n1: int, s2: float, n2: int, c: float, alpha: float
) -> tuple[float, float]:
    """The MLS interval for θ = c (E[S1] − E[S2]), S1 and S2 independent mean squares on n1 and
    n2 degrees of freedom, each side at level alpha (Burdick & Graybill 1992, eq. 3.8–3.9)."""
    f1_hi, f1_lo = f_inf(1.0 - alpha, n1), f_inf(alpha, n1)  # F_{α; n1, ∞}, F_{1−α; n1, ∞}
    f2_hi, f2_lo = f_inf(1.0 - alpha, n2), f_inf(alpha, n2)
    f12_hi, f12_lo = f.ppf(1.0 - alpha, n1, n2), f.ppf(alpha, n1, n2)
    g1, h1 = 1.0 - 1.0 / f1_hi, 1.0 / f1_lo - 1.0
    g2, h2 = 1.0 - 1.0 / f2_hi, 1.0 / f2_lo - 1.0
    g12 = ((f12_hi - 1.0) ** 2 - g1**2 * f12_hi**2 - h2**2) / f12_hi
    h12 = ((1.0 - f12_lo) ** 2 - h1**2 * f12_lo**2 - g2**2) / f12_lo
    theta = c * (s1 - s2)
    v_low = (g1 * c * s1) ** 2 + (h2 * c * s2) ** 2 + g12 * c * c * s1 * s2
    v_high = (h1 * c * s1) ** 2 + (g2 * c * s2) ** 2 + h12 * c * c * s1 * s2
    return theta - math.sqrt(max(v_low, 0.0)), theta + math.sqrt(max(v_high, 0.0))


def f_inf(q: float, df: int) -> float:
    """The q-quantile of F(df, ∞) = χ²_df / df."""
    return float(chi2.ppf(q, df) / df)
