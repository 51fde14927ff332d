"""Values adjusted to exactly the target rate (docs/method.md#exact-rate-adjustment).

A run reaches its target KL C only within a few percent, and the metrics move along the
frontier with KL, so part of a cell's seed spread is the spread of the achieved KL. Each seed's
value is moved along its variant's frontier to KL = C:

    adjusted_s = m_s + slope · (C − kl_s)

where slope = dm/dKL of the variant's frontier at C, estimated from the seed means over the
target rates: (mean kl, mean m) at each rate, a central difference between the two neighbouring
rates inside the grid and a one-sided difference at its ends. With one rate there is no slope
and no adjustment (adjusted = raw).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from zgain.report.loading import EvalResults
from zgain.report.statistics import finite_mean, t_interval
from zgain.report.tables import SEEDS

ADJUSTED_METRICS = ("z_information", "capture", "marginal_gain")
"""The metrics adjusted to exactly the target rate, and the ones the verdicts compare."""
ADJUSTED_PREFIX = "adjusted_"  # decomposition columns adjusted_mean, adjusted_low, adjusted_high
ADJUSTMENT_COLUMNS = ["variant", "rate", "metric", "slope", "mean", "low", "high", "n"]


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

    values[(variant, rate, metric)]: (n_seeds,) in seed order; slopes[(variant, rate, metric)]:
    the frontier slope used (NaN: not adjusted).
    """

    values: Mapping[tuple[str, float, str], np.ndarray]
    slopes: Mapping[tuple[str, float, str], float]
    adjusted: bool  # False with one target rate: values are the raw ones

    def of(self, variant: str, rate: float, metric: str) -> np.ndarray:
        return self.values[(variant, rate, metric)]


def adjust_results(
    by_rate: Mapping[float, EvalResults], metrics: Sequence[str] = ADJUSTED_METRICS
) -> Adjusted:
    """Adjust every variant's `metrics` at every target rate (the keys of `by_rate`)."""
    rates = sorted(by_rate)
    variants = by_rate[rates[0]].variants
    values, slopes = {}, {}
    for variant in variants:
        kls = {rate: by_rate[rate].values(variant, "kl") for rate in rates}
        kl_means = [finite_mean(kls[rate]) for rate in rates]
        for metric in metrics:
            raw = {rate: by_rate[rate].values(variant, metric) for rate in rates}
            slope = frontier_slopes(kl_means, [finite_mean(raw[rate]) for rate in rates])
            for rate, s in zip(rates, slope, strict=True):
                values[(variant, rate, metric)] = adjust_to_rate(raw[rate], kls[rate], rate, s)
                slopes[(variant, rate, metric)] = float(s)
    return Adjusted(values=values, slopes=slopes, adjusted=len(rates) > 1)


def adjustment_table(adjusted: Adjusted, confidence: float) -> pd.DataFrame:
    """tables/adjustment.csv: per (variant, rate, metric) the slope and the adjusted mean with
    its t-interval over seeds (ADJUSTMENT_COLUMNS)."""
    rows = []
    for (variant, rate, metric), values in adjusted.values.items():
        stats = t_interval(values, confidence)
        rows.append(
            {
                "variant": variant,
                "rate": rate,
                "metric": metric,
                "slope": adjusted.slopes[(variant, rate, metric)],
                **stats.row(),
            }
        )
    return pd.DataFrame(rows, columns=ADJUSTMENT_COLUMNS)


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
