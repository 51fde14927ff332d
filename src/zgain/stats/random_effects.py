"""Two-sided intervals for the variance components of a balanced one-way random-effects layout.

y_{b,s} = μ + β_b + ε_{b,s}, b = 1..B bases, s = 1..k seeds on each, β_b ~ N(0, σ_B²) and
ε_{b,s} ~ N(0, σ_W²). With MS_W the within mean square (B(k − 1) degrees of freedom) and MS_B
the between mean square (B − 1), σ_W² is estimated by MS_W and σ_B² by (MS_B − MS_W)/k.
σ_W's interval is the exact χ² one; σ_B's is the modified large-sample (MLS) interval of
Graybill and Wang for a difference of mean squares (Burdick & Graybill, *Confidence Intervals on
Variance Components*, 1992, §3.2), whose coverage stays near nominal even with few bases.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.stats import chi2, f


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
    ms_b = seeds * float(y.mean(axis=1).var(ddof=1))
    ms_w = float(y.var(axis=1, ddof=1).mean())
    alpha = (1.0 - confidence) / 2.0
    # σ_W²: n_w MS_W / σ_W² ~ χ²_{n_w}
    w_low = math.sqrt(n_w * ms_w / chi2.ppf(1.0 - alpha, n_w))
    w_high = math.sqrt(n_w * ms_w / chi2.ppf(alpha, n_w))
    b_low, b_high = mls_difference(ms_b, n_b, ms_w, n_w, 1.0 / seeds, alpha)
    sigma_b2 = (ms_b - ms_w) / seeds
    return ComponentIntervals(
        bases,
        seeds,
        ms_b,
        ms_w,
        math.sqrt(max(sigma_b2, 0.0)),
        math.sqrt(max(b_low, 0.0)),
        math.sqrt(max(b_high, 0.0)),
        math.sqrt(ms_w),
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
