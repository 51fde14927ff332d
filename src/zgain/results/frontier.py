"""The tables across target rates (docs/method.md#comparison-at-equal-rate): the headline
rate, the frontier (seed means per variant and rate) and the equal-rate twins check."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import pandas as pd

from zgain.cvae.terms import terms_used
from zgain.results.analysis.bounds import clip_to_bounds
from zgain.results.load.runs import EvalResults
from zgain.results.registry import FRONTIER, TWINS
from zgain.stats.intervals import paired_differences, t_interval

FRONTIER_METRICS = ("kl", "z_information", "capture", "marginal_gain")
FRONTIER_METRICS += ("probe_accuracy", "normalized_recovery")
TWIN_METRICS = ("z_information", "marginal_gain")


def headline_rate(rates: Sequence[float], oracle_info: float) -> float:
    """The target rate nearest the oracle's mean I* (the first of two equally near); without an
    oracle (NaN), the middle of the sorted rates (the lower of two middles)."""
    if not rates:
        raise ValueError("no target rates")
    if not math.isfinite(oracle_info):
        return sorted(rates)[(len(rates) - 1) // 2]
    return min(rates, key=lambda rate: abs(rate - oracle_info))


def frontier_table(by_rate: Mapping[float, EvalResults], confidence: float) -> pd.DataFrame:
    """Seed mean and t-interval of each FRONTIER_METRICS per (variant, rate)."""
    rows = []
    for rate, results in by_rate.items():
        for variant in results.variants:
            for metric in FRONTIER_METRICS:
                stats = clip_to_bounds(
                    t_interval(results.values(variant, metric), confidence), metric
                )
                rows.append((variant, rate, metric, *stats.row().values()))
    return FRONTIER.frame(rows)


def frontier_plot(frontier: pd.DataFrame) -> pd.DataFrame:
    """dvc plot data: one row per (variant, target rate), the variant in `series` (the column the
    `series` template colours by) and the seed mean of each FRONTIER_METRICS."""
    wide = frontier.pivot_table(
        index=["variant", "rate"], columns="metric", values="mean", sort=False, dropna=False
    )
    table = wide[list(FRONTIER_METRICS)].reset_index().rename_axis(columns=None)
    return table.rename(columns={"variant": "series"})


def twin_variants(weights: Mapping[str, Mapping[str, float]]) -> tuple[str, str] | None:
    """The (token-mean, dist_normalized) pair: variants weighting only `mean`, and only `dist`,
    each with weight 1 (R_dist = R_mean / N exactly); None unless both are listed."""

    def only(term: str) -> str | None:
        for variant, w in weights.items():
            if terms_used(w) == {term} and w[term] == 1.0:
                return variant
        return None

    mean, dist = only("mean"), only("dist")
    return (mean, dist) if mean and dist else None


def identical_runs(by_rate: Mapping[float, EvalResults]) -> dict[str, str]:
    """Each variant whose every run scored exactly what the same seed of an earlier listed
    variant scored, on every metric at every rate (a pure rescaling under scale-free control),
    mapped to the first such variant: a figure draws the two as one."""
    variants = next(iter(by_rate.values())).variants
    same: dict[str, str] = {}
    for i, later in enumerate(variants):
        for earlier in (v for v in variants[:i] if v not in same):
            if all(same_scores(at.runs, earlier, later) for at in by_rate.values()):
                same[later] = earlier
                break
    return same


def same_scores(runs: pd.DataFrame, a: str, b: str) -> bool:
    """Whether variants a and b have the same seeds with the same value of every column."""
    first, second = (
        runs[runs["variant"] == v].drop(columns="variant").reset_index(drop=True) for v in (a, b)
    )
    return first.equals(second)


def twin_check(
    by_rate: Mapping[float, EvalResults], pair: tuple[str, str], confidence: float
) -> pd.DataFrame:
    """Per rate and TWIN_METRICS: the seed-paired difference first − second of the pair, its
    mean and t-interval (raw values, for reading; the pair's verdicts are the verdict table's)."""
    first, second = pair
    rows = []
    for rate, results in by_rate.items():
        for metric in TWIN_METRICS:
            diffs = paired_differences(
                results.values(first, metric), results.values(second, metric)
            )
            rows.append((rate, metric, *t_interval(diffs, confidence).row().values()))
    return TWINS.frame(rows)


TOP_BAND = 3  # the top group: within this many equivalence margins δ of the best


def top_group(adjustment: pd.DataFrame, headline: float, metric: str, margins) -> list[str]:
    """The variants whose adjusted headline `metric` lies within TOP_BAND·δ of the best one's
    (δ: `metric`'s attribute of `margins`, report.equivalence), in params order: the zoomed
    frontier's group (a view, not a claim; the verdicts decide)."""
    at = adjustment[(adjustment["rate"] == headline) & (adjustment["metric"] == metric)]
    at = at[at["mean"].notna()]
    if at.empty:
        return []
    band = TOP_BAND * getattr(margins, metric)
    return at[at["mean"] >= at["mean"].max() - band]["variant"].tolist()
