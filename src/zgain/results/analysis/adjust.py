"""Values adjusted to exactly the target rate (docs/method.md#exact-rate-adjustment): each seed's
m_s + slope · (C − kl_s), slope = dm/dKL of its variant's frontier at C from the seed means at
the neighbouring rates. Runs more than RATE_TOLERANCE off C are left out; the jackknife
intervals redo the slope without each seed, so its uncertainty is in them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from zgain.evaluate.schema import KL_TARGET_KEY
from zgain.results.analysis.controller import outside_tolerance
from zgain.results.analysis.tables import SEEDS
from zgain.results.load.runs import EvalResults
from zgain.results.registry import ADJUSTMENT
from zgain.stats.intervals import Interval, finite_mean
from zgain.stats.intervals import jackknife as stats_jackknife

ADJUSTED_METRICS = ("z_information", "capture", "marginal_gain")
"""The metrics adjusted to exactly the target rate, and the ones the verdicts compare."""
ADJUSTED_PREFIX = "adjusted_"  # decomposition columns adjusted_mean, adjusted_low, adjusted_high


def frontier_slopes(kl_means: Sequence[float], metric_means: Sequence[float]) -> np.ndarray:
    """dm/dKL at each point of one variant's frontier (R,), points in target-rate order.

    Central difference (m[i+1] − m[i−1]) / (kl[i+1] − kl[i−1]) inside the grid, one-sided
    (m[1] − m[0]) / (kl[1] − kl[0]) and (m[R−1] − m[R−2]) / (kl[R−1] − kl[R−2]) at its ends
    (units of m per nat). NaN where a neighbour is undefined or the two KLs coincide; all NaN
    with one rate (no frontier to follow).
    """
    kl = np.asarray(kl_means, dtype=np.float64)
    m = np.asarray(metric_means, dtype=np.float64)
    if kl.shape != m.shape or kl.ndim != 1:
        raise ValueError(f"one (R,) shape needed, got {kl.shape} and {m.shape}")
    n = kl.size
    slopes = np.full(n, math.nan)
    for i in range(n if n > 1 else 0):
        lo, hi = max(i - 1, 0), min(i + 1, n - 1)
        run = kl[hi] - kl[lo]
        if math.isfinite(run) and run != 0.0:
            slopes[i] = (m[hi] - m[lo]) / run
    return slopes


def adjust_to_rate(values: np.ndarray, kls: np.ndarray, rate: float, slope: float) -> np.ndarray:
    """Per-seed values (n,) moved to KL = rate along `slope`: m_s + slope · (rate − kl_s).

    A slope that is not finite (one rate, or no estimable frontier) leaves the values as they
    are; a seed with an undefined kl gives NaN.
    """
    values = np.asarray(values, dtype=np.float64)
    if not math.isfinite(slope):
        return values.copy()
    return values + slope * (rate - np.asarray(kls, dtype=np.float64))


@dataclass(frozen=True)
class Adjusted:
    """Adjusted per-seed values of ADJUSTED_METRICS for every (variant, rate).

    values[(variant, rate, metric)]: (n_seeds,) in seed order, NaN for a run excluded as off
    its target (more than RATE_TOLERANCE from C) or undefined; slopes[(variant, rate, metric)]:
    the frontier slope used (NaN: not adjusted). raw and kls keep the kept runs' raw values and
    achieved KLs, so the adjustment can be redone without a seed (`without_seed`, the jackknife).
    """

    values: Mapping[tuple[str, float, str], np.ndarray]
    slopes: Mapping[tuple[str, float, str], float]
    adjusted: bool  # False with one target rate: values are the raw ones
    raw: Mapping[tuple[str, float, str], np.ndarray]
    kls: Mapping[tuple[str, float], np.ndarray]
    excluded: Mapping[tuple[str, float], np.ndarray]

    def of(self, variant: str, rate: float, metric: str) -> np.ndarray:
        return self.values[(variant, rate, metric)]

    def n_seeds(self) -> int:
        return len(next(iter(self.values.values()))) if self.values else 0

    def without_seed(self, index: int) -> Adjusted:
        """The adjustment redone with seed `index` (position in seed order) left out: its
        values NaN, the slopes from the other seeds' means."""
        raw = {key: _drop(v, index) for key, v in self.raw.items()}
        kls = {key: _drop(v, index) for key, v in self.kls.items()}
        return _adjust(raw, kls, self.excluded)


def _drop(values: np.ndarray, index: int) -> np.ndarray:
    out = np.asarray(values, dtype=np.float64).copy()
    out[index] = math.nan
    return out


def _adjust(
    raw: Mapping[tuple[str, float, str], np.ndarray],
    kls: Mapping[tuple[str, float], np.ndarray],
    excluded: Mapping[tuple[str, float], np.ndarray],
) -> Adjusted:
    rates = sorted({rate for _, rate in kls})
    values, slopes = {}, {}
    for variant, metric in dict.fromkeys((v, m) for v, _, m in raw):
        kl_means = [finite_mean(kls[(variant, rate)]) for rate in rates]
        means = [finite_mean(raw[(variant, rate, metric)]) for rate in rates]
        for rate, s in zip(rates, frontier_slopes(kl_means, means), strict=True):
            key = (variant, rate, metric)
            values[key] = adjust_to_rate(raw[key], kls[(variant, rate)], rate, s)
            slopes[key] = float(s)
    return Adjusted(values, slopes, len(rates) > 1, raw, kls, excluded)


def runs_off(results: EvalResults, variant: str) -> np.ndarray:
    """(n,) True for each run of `variant` more than RATE_TOLERANCE off its target: the runs
    every table at exactly C leaves out (none without targets, under a fixed β schedule)."""
    kl = results.values(variant, "kl")
    if KL_TARGET_KEY not in results.runs:
        return np.zeros(kl.shape, bool)
    return outside_tolerance(kl, results.values(variant, KL_TARGET_KEY))


def adjust_results(
    by_rate: Mapping[float, EvalResults],
    metrics: Sequence[str] = ADJUSTED_METRICS,
    exclude_off_target: bool = True,
) -> Adjusted:
    """Adjust every variant's `metrics` at every target rate (the keys of `by_rate`); a run
    more than RATE_TOLERANCE off its target is left out of its rate (its values NaN), so no
    value is moved along the frontier by more than that share of C."""
    rates = sorted(by_rate)
    variants = by_rate[rates[0]].variants
    raw, kls, excluded = {}, {}, {}
    for variant in variants:
        for rate in rates:
            kl = by_rate[rate].values(variant, "kl")
            off = (
                runs_off(by_rate[rate], variant) if exclude_off_target else np.zeros(kl.shape, bool)
            )
            excluded[(variant, rate)] = off
            kls[(variant, rate)] = np.where(off, math.nan, kl)
            for metric in metrics:
                values = by_rate[rate].values(variant, metric)
                raw[(variant, rate, metric)] = np.where(off, math.nan, values)
    return _adjust(raw, kls, excluded)


def jackknife(
    adjusted: Adjusted,
    estimate: Callable[[Adjusted], float],
    used: Sequence[int],
    confidence: float,
) -> tuple[Interval, float]:
    """`estimate(adjusted)` with a leave-one-seed-out jackknife interval over the seeds `used`
    (positions in seed order that define the estimate): each replicate redoes the adjustment
    without one seed, so the slope's own uncertainty enters (zgain.stats.intervals.jackknife).
    Returns (interval, SE); no interval with n < 2."""
    theta = float(estimate(adjusted))
    if not math.isfinite(theta) or len(used) < 2:
        return Interval.point(theta, len(used)), math.nan
    replicates = [float(estimate(adjusted.without_seed(j))) for j in used]
    return stats_jackknife(theta, replicates, confidence)


def finite_seeds(values: np.ndarray) -> list[int]:
    """Positions (seed order) of the finite entries of `values`."""
    return [int(i) for i in np.flatnonzero(np.isfinite(np.asarray(values, dtype=np.float64)))]


def adjustment_table(adjusted: Adjusted, confidence: float) -> pd.DataFrame:
    """tables/adjustment.csv: per (variant, rate, metric) the slope and the adjusted mean with
    its jackknife interval over the kept seeds (registry.ADJUSTMENT; `excluded` counts the runs
    left out as off their target)."""
    rows = []
    for (variant, rate, metric), values in adjusted.values.items():
        stats, _ = jackknife(
            adjusted,
            lambda adj, key=(variant, rate, metric): finite_mean(adj.values[key]),
            finite_seeds(values),
            confidence,
        )
        excluded = adjusted.excluded.get((variant, rate))
        n_off = int(np.sum(excluded)) if excluded is not None else 0
        slope = adjusted.slopes[(variant, rate, metric)]
        rows.append((variant, rate, metric, slope, *stats.row().values(), n_off))
    return ADJUSTMENT.frame(rows)


def with_adjusted(
    decomposition: pd.DataFrame, adjustment: pd.DataFrame, rate: float
) -> pd.DataFrame:
    """The decomposition table at `rate` with adjusted_mean/low/high beside mean/low/high
    (NaN for reference rows and for metrics that are not adjusted)."""
    at = adjustment[adjustment["rate"] == rate].set_index(["variant", "metric"])
    keys = pd.MultiIndex.from_frame(decomposition[["variant", "metric"]])
    table = decomposition.copy()
    for column in ("mean", "low", "high"):
        table[ADJUSTED_PREFIX + column] = at[column].reindex(keys).to_numpy()
    seeds = table["kind"] == SEEDS
    table.loc[~seeds, [ADJUSTED_PREFIX + c for c in ("mean", "low", "high")]] = math.nan
    return table
