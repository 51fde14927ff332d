"""Comparison at equal rate: runs at several target KLs (docs/method.md#comparison-at-equal-rate).

Every variant is trained toward the same target rates C, so at one C the variants pay the same
price in KL and differ only in what their weighting buys with it. This module holds the
tables across rates: whether each run reached its target, the frontier (seed means of the
headline metrics per variant and rate), and the check that token-mean and its rescaled twin
dist_normalized coincide at equal rate.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from zgain.core.runs import Run
from zgain.cvae.terms import terms_used
from zgain.evaluate.schema import KL_TARGET_KEY
from zgain.report.bounds import clip_to_bounds
from zgain.report.controller import ControllerEnd, miss_cause
from zgain.report.loading import EvalResults
from zgain.report.registry import FRONTIER, RATE_CHECK, TWINS
from zgain.report.statistics import paired_row, t_interval

RATE_TOLERANCE = 0.10
# "more than 10% off": kl/C − 1 computed in floats lands a few ulp past 0.10 for a run exactly
# 10% off (1.1/1.0 − 1 = 0.10000000000000009); this slack keeps such a run in.
TOLERANCE_SLACK = 1e-9
"""A run whose achieved test KL is more than this share away from its target is flagged."""

FRONTIER_METRICS = (
    "kl",
    "z_information",
    "capture",
    "marginal_gain",
    "probe_accuracy",
    "normalized_recovery",
)
TWIN_METRICS = ("z_information", "marginal_gain")


def headline_rate(rates: Sequence[float], oracle_info: float) -> float:
    """The target rate nearest the oracle's mean I* (the first of two equally near); without an
    oracle (NaN), the middle of the sorted rates (the lower of two middles)."""
    if not rates:
        raise ValueError("no target rates")
    if not math.isfinite(oracle_info):
        return sorted(rates)[(len(rates) - 1) // 2]
    return min(rates, key=lambda rate: abs(rate - oracle_info))


def outside_tolerance(kls: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """(n,) True where a run's achieved KL is more than RATE_TOLERANCE from its target (a run
    without a target, under a fixed β schedule, is never off)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        error = np.abs(np.asarray(kls, dtype=np.float64) / np.asarray(targets, np.float64) - 1.0)
    return np.isfinite(error) & (error > RATE_TOLERANCE + TOLERANCE_SLACK)


def rate_check(
    by_rate: Mapping[float, EvalResults],
    controller: Mapping[Run, ControllerEnd],
    beta_bounds: tuple[float, float],
) -> pd.DataFrame:
    """One row per run: its target KL, achieved test KL, kl/target − 1, whether it is off, the
    rate controller's state where training ended, and for a run that is off the cause
    (zgain.report.controller; beta_bounds = (beta_min, beta_max)).

    A run trained under a fixed β schedule has no target (NaN), no controller state and is
    never flagged; `controller` holds every run with a target.
    """
    rows = []
    for rate, results in by_rate.items():
        for _, run in results.runs.iterrows():
            target = float(run.get(KL_TARGET_KEY, math.nan))
            error = run["kl"] / target - 1.0 if math.isfinite(target) else math.nan
            off = bool(outside_tolerance(run["kl"], target))
            row = {
                "variant": run["variant"],
                "rate": rate,
                "seed": int(run["seed"]),
                KL_TARGET_KEY: target,
                "kl": float(run["kl"]),
                "relative_error": error,
                "off": off,
            }
            if math.isfinite(target):
                end = controller[Run(run["variant"], rate, int(run["seed"]), results.base)]
                row |= end.row()
                if off:
                    row["cause"] = miss_cause(end, target, *beta_bounds, RATE_TOLERANCE)
            rows.append(row)
    return RATE_CHECK.frame(rows)


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


def twin_check(
    by_rate: Mapping[float, EvalResults], pair: tuple[str, str], confidence: float
) -> pd.DataFrame:
    """Per rate and TWIN_METRICS: the seed-paired difference first − second of the pair, its
    mean and t-interval (raw values, for reading; the pair's verdicts are the verdict table's)."""
    first, second = pair
    rows = []
    for rate, results in by_rate.items():
        for metric in TWIN_METRICS:
            paired = paired_row(results, first, second, metric, confidence)
            rows.append({"rate": rate, "metric": metric, **paired})
    return pd.DataFrame(rows).reindex(columns=list(TWINS.columns))


def run_points(by_rate: Mapping[float, EvalResults]) -> pd.DataFrame:
    """One row per run: variant, rate, seed and the FRONTIER_METRICS (the figure's points)."""
    frames = []
    for rate, results in by_rate.items():
        frame = results.runs[["variant", "seed", *FRONTIER_METRICS]].copy()
        frame.insert(1, "rate", rate)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def off_target(check: pd.DataFrame) -> pd.DataFrame:
    """The flagged runs of `rate_check`, worst first."""
    flagged = check[check["off"]]
    order = np.argsort(-np.abs(flagged["relative_error"].to_numpy()), kind="stable")
    return flagged.iloc[order]
