"""Intervals over bases: claims about the training procedure, not about one frozen base.

A replicate is a (base, seed) pair and gives one value y_{b,s} (for a comparison, the paired
difference d_{b,s} of variant − baseline at one rate). The model is the one-way random-effects
model y_{b,s} = μ + β_b + ε_{b,s}, β_b ~ (0, σ_B²) the base's offset and ε_{b,s} ~ (0, σ_W²) the
seed-to-seed noise. A claim about the procedure is a claim about μ, whose replicates are the
bases: the per-base means ȳ_b (k_b finite replicates each) are independent with
Var(ȳ_b) = σ_B² + σ_W²/k_b, so their unweighted mean with a Student-t interval over the b
per-base means (b − 1 degrees of freedom, `statistics.t_interval`) is the procedure's interval.
Seeds within a base are not independent replicates of the procedure and are never pooled as such.

Variance components (method of moments, unbalanced design):
    σ_W² = Σ_b (k_b − 1) s_b² / Σ_b (k_b − 1)       s_b² the within-base variance (ddof 1)
    σ_B² = max(0, var_b(ȳ_b) − (1/b) Σ_b σ_W²/k_b)   since E var_b(ȳ_b) = σ_B² + (1/b) Σ σ_W²/k_b
A clipped σ_B of 0 says only that the bases spread no more than the seeds predict, so each σ
comes with its one-sided upper confidence bound at the report's level c (normal model):
    σ_W ≤ σ_W · √(df_W / χ²_{1−c, df_W})             df_W = Σ_b (k_b − 1), exact
    σ_B ≤ s_ȳ · √((b − 1) / χ²_{1−c, b−1})           s_ȳ the sd of the b per-base means
The second bounds √(σ_B² + σ_W²/k) (exact with k seeds on every base), hence σ_B: conservative,
since it does not subtract the seeds' share. With one seed per base (df_W = 0) the design
cannot tell σ_B from σ_W: σ_W is undefined and σ_B is the spread of the values, both together.

Design: with b bases and k seeds each, SE = √(σ_B² + σ_W²/k) / √b; the smallest |Δ| that the
two-sided t-test at level 1 − c detects with probability p solves the noncentral-t power
P(|T| > t_{(1+c)/2, b−1}), T ~ nct(b − 1, Δ/SE) (`statistics.t_test_power`). For a budget
b (c_B + k c_s), the variance of the grand mean is least at k* = √(c_B σ_W² / (c_s σ_B²)) seeds
per base.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from zgain.report.statistics import (
    POWER,
    Interval,
    detectable_noncentrality,
    spread_upper_bound,
    t_interval,
)

COLUMNS = ("base", "seed", "value")


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


@dataclass(frozen=True)
class ProcedureInterval:
    """The procedure's mean with its interval over bases, and what went into it."""

    interval: Interval
    components: VarianceComponents
    n_replicates: int
    per_base: dict[int, float]


def _finite(values: pd.DataFrame) -> pd.DataFrame:
    """The rows of `values` with a finite `value` (columns `base`, `seed`, `value`)."""
    missing = [c for c in COLUMNS if c not in values.columns]
    if missing:
        raise ValueError(f"values need columns {COLUMNS}, missing {missing}")
    value = values["value"].to_numpy(dtype=np.float64)
    return values.loc[np.isfinite(value), list(COLUMNS)].astype({"value": np.float64})


def variance_components(values: pd.DataFrame, confidence: float) -> VarianceComponents:
    """σ_B and σ_W of `values` (one row per replicate, NaN values dropped), in value units, with
    their one-sided upper bounds at level `confidence` (the module's formulas).

    σ_W pools the bases with ≥ 2 finite replicates (NaN when none); σ_B is NaN with fewer than 2
    bases and clipped at 0 when the per-base means spread less than σ_W alone predicts; a NaN
    σ_W counts as 0 in σ_B (every base has one replicate: σ_B is then the SD of the values).
    """
    groups = _finite(values).groupby("base")["value"]
    k = groups.size().to_numpy(dtype=np.float64)
    means = groups.mean().to_numpy()
    variances = groups.var(ddof=1).to_numpy()
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


def procedure_interval(values: pd.DataFrame, confidence: float) -> ProcedureInterval:
    """Unweighted mean of the per-base means with its t-interval over the b bases (b − 1 df).

    Bases whose values are all NaN are dropped; one base gives its mean with no interval (one
    base says nothing about the spread over bases). Units are those of `value`.
    """
    finite = _finite(values)
    per_base = {int(b): float(m) for b, m in finite.groupby("base")["value"].mean().items()}
    return ProcedureInterval(
        interval=t_interval(np.array(list(per_base.values()), dtype=np.float64), confidence),
        components=variance_components(finite, confidence),
        n_replicates=len(finite),
        per_base=per_base,
    )


def detectable_difference(
    sigma_b: float,
    sigma_w: float,
    n_bases: int,
    seeds_per_base: float,
    confidence: float,
    power: float = POWER,
) -> float:
    """Smallest |Δ| (value units) that the two-sided t-test over n_bases per-base means, each of
    seeds_per_base seeds, at level 1 − confidence detects with probability `power`.

    NaN when n_bases < 2 or σ_B is NaN; 0 when power ≤ 1 − confidence (Δ = 0 already rejects
    that often) or both σ are 0. A NaN σ_W (one seed per base) counts as 0: σ_B is then the
    whole spread of the per-base means (`variance_components`), which is what the test uses.
    """
    if not 0.0 < power < 1.0:
        raise ValueError(f"power must be in (0, 1), got {power}")
    if not seeds_per_base > 0:
        raise ValueError(f"seeds_per_base must be positive, got {seeds_per_base}")
    if n_bases < 2 or math.isnan(sigma_b):
        return math.nan
    if math.isnan(sigma_w):
        sigma_w = 0.0
    se = math.sqrt(sigma_b**2 + sigma_w**2 / seeds_per_base) / math.sqrt(n_bases)
    if se == 0.0:
        return 0.0
    return detectable_noncentrality(n_bases, confidence, power) * se


def seeds_per_base(
    cost_base: float, cost_replicate: float, sigma_b: float, sigma_w: float
) -> float:
    """k* = √(c_B σ_W² / (c_s σ_B²)): the seeds per base that minimise the variance of the grand
    mean, (σ_B² + σ_W²/k) / b, for a fixed budget b (c_B + k c_s).

    c_B (cost_base) is the cost of one base, c_s (cost_replicate) of one seed on it, in the same
    units; inf when σ_B = 0 (only seeds reduce the variance).
    """
    if not (cost_base > 0 and cost_replicate > 0):
        raise ValueError(f"costs must be positive, got {cost_base} and {cost_replicate}")
    if sigma_b == 0.0:
        return math.inf
    return math.sqrt(cost_base * sigma_w**2 / (cost_replicate * sigma_b**2))
