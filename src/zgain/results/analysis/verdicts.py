"""Verdicts of the declared comparisons at equal rate (docs/method.md#verdicts): each variant
against the baseline and `report.pairs`, at every rate, on capture and G^marg. A comparison is
the mean of the seed-paired differences of the values adjusted to exactly C, with a jackknife
SE that redoes the adjustment; the rule is zgain.stats.rule.decide.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from zgain.results.analysis.adjust import Adjusted, finite_seeds, jackknife
from zgain.results.registry import HALF_WIDTHS, VERDICTS
from zgain.stats.intervals import finite_mean, t_bounds, t_interval
from zgain.stats.power import SEEDS_CAP, replicates_needed, seeds_for_half_width
from zgain.stats.rule import UNDETERMINED, Evidence, alpha_of, decide

BASELINE_PAIR, DECLARED_PAIR = "baseline", "declared"


def count_cell(n: float) -> str:
    """A sample size as a table cell: "" when undefined, "> SEEDS_CAP" beyond the search."""
    if math.isnan(n):
        return ""
    return f"> {SEEDS_CAP}" if math.isinf(n) else str(int(n))


def declared_pairs(
    variants: Sequence[str], baseline: str, pairs: Sequence[Sequence[str]] = ()
) -> list[tuple[str, str, str]]:
    """(a, b, kind) per comparison a − b: each variant against the baseline, then the pairs
    declared in params (report.pairs) not already among them."""
    out = [(v, baseline, BASELINE_PAIR) for v in variants if v != baseline]
    seen = {(a, b) for a, b, _ in out} | {(b, a) for a, b, _ in out}
    for a, b in pairs:
        if (a, b) not in seen and a in variants and b in variants:
            out.append((a, b, DECLARED_PAIR))
            seen |= {(a, b), (b, a)}
    return out


def paired_difference(
    adjusted: Adjusted, a: str, b: str, rate: float, metric: str, confidence: float
) -> tuple[float, float, int, list[int]]:
    """(mean, jackknife SE, n, seeds used) of the adjusted differences a − b at `rate`."""
    d = adjusted.of(a, rate, metric) - adjusted.of(b, rate, metric)
    used = finite_seeds(d)

    def estimate(adj: Adjusted) -> float:
        return finite_mean(adj.of(a, rate, metric)[used] - adj.of(b, rate, metric)[used])

    stats, se = jackknife(adjusted, estimate, used, confidence)
    return stats.mean, se, len(used), used


def verdict_table(
    adjusted: Adjusted,
    variants: Sequence[str],
    baseline: str,
    pairs: Sequence[Sequence[str]],
    deltas: Mapping[str, float],
    metrics: Sequence[str],
    confidence: float,
) -> pd.DataFrame:
    """tables/verdicts.csv: one row per declared comparison, rate and tested metric
    (registry.VERDICTS). low/high: the `confidence` interval, tost_low/tost_high the (1 − 2α)
    one, both mean ± t · jackknife SE with n − 1 degrees of freedom; α = 1 − confidence."""
    rates = sorted({rate for _, rate, _ in adjusted.values})
    comparisons = declared_pairs(variants, baseline, pairs)
    alpha = alpha_of(confidence)
    rows = []
    for rate in rates:
        for metric in metrics:
            found = [
                paired_difference(adjusted, a, b, rate, metric, confidence)
                for a, b, _ in comparisons
            ]
            evidence = [Evidence.of_se(mean, se, n, confidence) for mean, se, n, _ in found]
            decided = decide(evidence, deltas[metric], confidence)
            family = f"C = {rate:g}, {metric}: {len(comparisons)} comparisons"
            for (a, b, kind), (mean, se, n, _), e, (ph, verdict) in zip(
                comparisons, found, evidence, decided, strict=True
            ):
                low, high = t_bounds(mean, se, n, confidence)
                sd = se * math.sqrt(n) if math.isfinite(se) else math.nan
                needed = (
                    count_cell(replicates_needed(mean, sd, n, alpha / len(comparisons)))
                    if verdict == UNDETERMINED
                    else ""
                )
                rows.append(
                    (rate, metric, a, b, kind, mean, low, high, e.tost_low, e.tost_high, se, n)
                    + (e.p, ph, family, deltas[metric], verdict, needed)
                )
    return VERDICTS.frame(rows)


def half_width_table(
    adjusted: Adjusted,
    variants: Sequence[str],
    rate: float,
    target: float,
    confidence: float,
    metric: str = "capture",
) -> pd.DataFrame:
    """tables/half_widths.csv: each variant's adjusted `metric` at `rate`, the half-width of its
    interval and the seeds a half-width of `target` would need given its sd."""
    rows = []
    for variant in variants:
        values = adjusted.of(variant, rate, metric)
        finite = values[np.isfinite(values)]
        stats = t_interval(finite, confidence)
        sd = float(finite.std(ddof=1)) if finite.size > 1 else math.nan
        needed = seeds_for_half_width(sd, target, confidence)
        needed_text = "" if not math.isfinite(sd) else str(needed) if needed else f"> {SEEDS_CAP}"
        half = (stats.high - stats.low) / 2.0
        rows.append((variant, rate, stats.mean, sd, stats.n, half, target, needed_text))
    return HALF_WIDTHS.frame(rows)
