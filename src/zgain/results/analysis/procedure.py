"""Claims about the training procedure: intervals over bases, their variance components and
the design's detectable difference, and tables/procedure.csv and tables/bases.csv.

A replicate is a (base, seed) pair with value y_{b,s} = μ + β_b + ε_{b,s} (one-way random
effects, σ_B² and σ_W²). The claim is about μ, whose replicates are the bases: the unweighted
mean of the per-base means with a t-interval over them (b − 1 df). σ_W and σ_B are method-of-
moments estimates, each with its one-sided upper confidence bound (χ²); with one seed per base
they cannot be told apart. The formulas: docs/method.md#claims-about-the-procedure.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from zgain.core.runs import Tier
from zgain.params import Params
from zgain.results.analysis.adjust import Adjusted, adjust_to_rate, runs_off
from zgain.results.load.bases import BaseRuns, comparisons, mismatch_table, replicates
from zgain.results.registry import BASES, MISMATCH, PROCEDURE
from zgain.results.settings import Settings
from zgain.stats.intervals import Interval, mean_se, t_interval
from zgain.stats.power import detectable_difference
from zgain.stats.random_effects import VarianceComponents, components_of_moments
from zgain.stats.rule import Evidence, decide

COLUMNS = ("base", "seed", "value")
PROCEDURE_METRICS = ("capture", "marginal_gain")
BASES_COLUMNS = ("base", "tier", "sha256", "test_excess_nats", "rate", "seeds")
"""The metrics compared over bases: the verdict table's two."""


@dataclass(frozen=True)
class ProcedureInterval:
    """The procedure's mean with its interval over bases, and what went into it."""

    interval: Interval
    components: VarianceComponents
    n_replicates: int
    per_base: dict[int, float]


def base_values(
    base: BaseRuns, variant: str, rate: float, metric: str, slope: float
) -> pd.DataFrame:
    """(base, seed, value): one base's replicates' `metric` moved to exactly `rate` along `slope`
    (NaN for a run off its target)."""
    at = base.results[rate]
    moved = adjust_to_rate(at.values(variant, metric), at.values(variant, "kl"), rate, slope)
    value = np.where(runs_off(at, variant), math.nan, moved)
    return pd.DataFrame({"base": base.seed, "seed": list(at.seeds), "value": value})


def base_n_off(base: BaseRuns, variants: Sequence[str], rate: float) -> int:
    """How many of one base's runs of `variants` at `rate` are off their target."""
    return sum(int(runs_off(base.results[rate], v).sum()) for v in variants)


def _finite(values: pd.DataFrame) -> pd.DataFrame:
    """The rows of `values` with a finite `value` (columns `base`, `seed`, `value`)."""
    missing = [c for c in COLUMNS if c not in values.columns]
    if missing:
        raise ValueError(f"values need columns {COLUMNS}, missing {missing}")
    value = values["value"].to_numpy(dtype=np.float64)
    return values.loc[np.isfinite(value), list(COLUMNS)].astype({"value": np.float64})


def variance_components(values: pd.DataFrame, confidence: float) -> VarianceComponents:
    """σ_B and σ_W of `values` (one row per replicate, NaN values dropped) with their one-sided
    upper bounds at level `confidence`: zgain.stats.random_effects.components_of_moments of each
    base's count, mean and variance."""
    groups = _finite(values).groupby("base")["value"]
    k = groups.size().to_numpy(dtype=np.float64)
    return components_of_moments(
        k, groups.mean().to_numpy(), groups.var(ddof=1).to_numpy(), confidence
    )


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


def procedure_table(
    bases: Sequence[BaseRuns],
    pairs: Sequence[tuple[str, str]],
    adjusted: Adjusted,
    confidence: float,
    deltas: Mapping[str, float],
    metrics: Sequence[str] = PROCEDURE_METRICS,
) -> pd.DataFrame:
    """tables/procedure.csv: per comparison a − b, rate and metric, the mean of the per-base mean
    differences with its t-interval over bases, σ_B and σ_W with their upper bounds, the
    smallest |Δ| detectable at POWER, the runs left out, and the verdict of the one rule with
    the per-base means as replicates (Holm over one rate and metric, margin `deltas[metric]`)."""
    rows = []
    rates = list(bases[0].results) if bases else []
    for rate in rates:
        for metric in metrics:
            family = []
            for a, b in pairs:
                diffs = []
                for base in bases:
                    va = base_values(base, a, rate, metric, adjusted.slopes[(a, rate, metric)])
                    vb = base_values(base, b, rate, metric, adjusted.slopes[(b, rate, metric)])
                    diffs.append(va.assign(value=va["value"] - vb["value"]))
                result = procedure_interval(pd.concat(diffs, ignore_index=True), confidence)
                family.append((a, b, result))
            evidence = [
                Evidence.of_se(*mean_se(np.array(list(r.per_base.values()))), confidence)
                for _, _, r in family
            ]
            decided = decide(evidence, deltas[metric], confidence)
            for (a, b, result), e, (p_holm, verdict) in zip(family, evidence, decided, strict=True):
                parts = result.components
                n = result.interval.n
                k = result.n_replicates / n if n else math.nan
                detectable = (math.nan, math.nan)
                if n >= 2:  # the smallest |Δ| at the estimated σ and at σ_B's bound
                    detectable = (
                        detectable_difference(parts.sigma_b, parts.sigma_w, n, k, confidence),
                        detectable_difference(parts.sigma_b_upper, 0.0, n, k, confidence),
                    )
                rows.append(
                    (a, b, rate, metric, *result.interval.row().values(), result.n_replicates)
                    + (parts.sigma_b, parts.sigma_b_upper, parts.sigma_w, parts.sigma_w_upper)
                    + detectable
                    + (
                        sum(base_n_off(base, (a, b), rate) for base in bases),
                        e.tost_low,
                        e.tost_high,
                    )
                    + (e.p, p_holm, verdict)
                )
    return PROCEDURE.frame(rows)


def procedure_tables(
    bases: Sequence[BaseRuns],
    params: Params,
    settings: Settings,
    adjusted: Adjusted,
    metrics: Sequence[str],
) -> dict[str, pd.DataFrame]:
    """tables/procedure.csv and tables/bases.csv on `metrics` (those the data allows: capture
    needs the oracle); none without bases."""
    if not bases:
        return {}
    confidence, deltas = settings.confidence, settings.deltas
    table = procedure_table(
        replicates(bases), comparisons(params), adjusted, confidence, deltas, metrics
    )
    facts = bases_table(bases, params.cvae.confirm.variants, adjusted, metrics[0])
    mismatch = mismatch_table([base.mismatch for base in bases])
    return {PROCEDURE.name: table, BASES.name: facts, MISMATCH.name: mismatch}


def bases_table(
    bases: Sequence[BaseRuns], variants: Sequence[str], adjusted: Adjusted, metric: str
) -> pd.DataFrame:
    """tables/bases.csv: per base, its tier, sha256, test excess and replicates, and each
    contested variant's mean `metric` (moved to exactly C; off-target runs left out) per rate."""
    rows = []
    for base in bases:
        for rate, at in base.results.items():
            row = {
                "base": base.seed,
                "tier": base.tier,
                "sha256": base.sha256,
                "test_excess_nats": base.test_excess,
                "rate": rate,
                "seeds": len(at.seeds),
            }
            for v in variants:
                values = base_values(base, v, rate, metric, adjusted.slopes[(v, rate, metric)])
                finite = values["value"].dropna()
                row[v] = float(finite.mean()) if len(finite) else math.nan
            rows.append(row)
    return pd.DataFrame(rows)


def mean_over_bases(facts: pd.DataFrame, rate: float) -> dict[str, float]:
    """Each contested variant's mean over the confirming bases of its per-base mean at `rate`
    (tables/bases.csv's columns: capture where there is an oracle), the value the Findings quote
    beside its differences; NaN where no confirming base has one."""
    at = facts[(facts["rate"] == rate) & (facts["tier"] == Tier.CONFIRMING)]
    variants = [c for c in facts.columns if c not in BASES_COLUMNS]
    return {v: float(at[v].mean()) if at[v].notna().any() else math.nan for v in variants}
