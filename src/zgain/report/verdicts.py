"""Verdicts of the pre-declared comparisons at equal rate: one rule (docs/method.md#verdicts).

At every target rate and on each tested metric (capture, and G^marg; I^θ is capture × I*, so
it is shown beside capture, never tested again), each variant is compared with the baseline
and the pairs `report.pairs` names: nothing is picked from the results. A comparison a − b is
the mean of the seed-paired differences of the values adjusted to exactly the rate, with a
leave-one-seed-out jackknife SE that redoes the adjustment (zgain.report.adjust), so the
slope's uncertainty is in it; runs off their target are left out. Its verdict, tried in order:

- `equivalent`: the (1 − 2·ALPHA) interval lies inside ±δ (TOST at ALPHA; δ per metric from
  report.equivalence), whatever the test says: a difference inside ±δ is never `better`;
- `better` / `worse`: the two-sided t-test (df n − 1) rejects at ALPHA after Holm's step-down
  adjustment over the comparisons of one rate and metric (the family the Findings state);
- `undetermined`: neither, or fewer than MIN_SEEDS replicates; `replicates_needed` then gives
  the n at which a paired t-test at the family's Bonferroni level would separate the observed
  difference with 80% power (noncentral t), at the spread's 80% upper confidence bound.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy.stats import chi2, nct
from scipy.stats import t as student_t

from zgain.report.adjust import Adjusted, finite_seeds, jackknife
from zgain.report.statistics import finite_mean, t_interval

ALPHA = 0.05  # level of the paired tests (two-sided) and of each one-sided TOST test
MIN_SEEDS = 3  # fewer replicates than this: every verdict is undetermined
SEEDS_CAP = 100  # replicates_needed beyond this is written as "> SEEDS_CAP"
POWER = 0.8  # the power replicates_needed aims at
SPREAD_UPPER = 0.8  # one-sided level of the upper confidence bound on the spread
BETTER, WORSE, EQUIVALENT, UNDETERMINED = "better", "worse", "equivalent", "undetermined"
BASELINE_PAIR, DECLARED_PAIR = "baseline", "declared"
VERDICT_COLUMNS = [
    "rate",
    "metric",
    "a",
    "b",
    "comparison",
    "mean_diff",
    "low",
    "high",
    "tost_low",
    "tost_high",
    "se",
    "n",
    "p",
    "p_holm",
    "family",
    "delta",
    "verdict",
    "replicates_needed",
]
HALF_WIDTH_COLUMNS = ["variant", "rate", "mean", "sd", "n", "half_width", "target", "seeds_needed"]


SYMBOL = {BETTER: "▲", WORSE: "▼", EQUIVALENT: "≈", UNDETERMINED: "?"}
LEGEND = "▲ better ▼ worse ≈ equivalent (90% interval) ? undetermined"


def holm(pvalues: Sequence[float]) -> np.ndarray:
    """Holm's step-down adjusted p-values (m,): the k-th smallest of the m finite p-values gets
    max_{j ≤ k} min(1, (m − j + 1) · p_(j)); NaN entries stay NaN and do not count in m."""
    p = np.asarray(pvalues, dtype=np.float64)
    adjusted = np.full(p.shape, math.nan)
    finite = np.flatnonzero(np.isfinite(p))
    order = finite[np.argsort(p[finite], kind="stable")]
    m, running = order.size, 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[index]))
        adjusted[index] = running
    return adjusted


def paired_p(diffs: np.ndarray) -> float:
    """Two-sided p-value of the paired t-test that the mean of the finite `diffs` is 0.

    NaN with fewer than 2 values; with zero spread, 0 for a nonzero mean and 1 for a zero one.
    """
    d = np.asarray(diffs, dtype=np.float64)
    d = d[np.isfinite(d)]
    if d.size < 2:
        return math.nan
    return t_p_value(float(d.mean()), float(d.std(ddof=1)) / math.sqrt(d.size), int(d.size))


def half_width(sd: float, n: int, level: float) -> float:
    """t_{level, n−1} · sd / √n: the half-width of a t-interval whose one-sided level is `level`."""
    return float(student_t.ppf(level, df=n - 1)) * sd / math.sqrt(n)


def spread_upper_bound(sd: float, n: int, level: float = SPREAD_UPPER) -> float:
    """The one-sided `level` upper confidence bound on σ from a sample sd of n values:
    sd · √((n−1) / χ²_{1−level, n−1})."""
    return sd * math.sqrt((n - 1) / float(chi2.ppf(1.0 - level, df=n - 1)))


def power(effect: float, sd: float, n: int, alpha: float) -> float:
    """Power of the two-sided one-sample t-test at level alpha with n replicates, for a true
    mean `effect` and spread `sd`: P(|T| > t_{1−α/2, n−1}), T ~ noncentral t(n−1, effect·√n/sd)."""
    df, shift = n - 1, effect * math.sqrt(n) / sd
    critical = float(student_t.ppf(1.0 - alpha / 2.0, df))
    return float(nct.sf(critical, df, shift) + nct.cdf(-critical, df, shift))


def replicates_needed(mean: float, sd: float, n: int, alpha: float) -> str:
    """The smallest n' ≥ MIN_SEEDS with POWER to separate `mean` at level `alpha`, with σ at
    its SPREAD_UPPER upper bound from the n observed replicates; "" without a spread."""
    if n < 2 or not (math.isfinite(mean) and math.isfinite(sd)) or mean == 0.0:
        return ""
    sigma = spread_upper_bound(sd, n)
    if sigma == 0.0:
        return str(MIN_SEEDS)
    for size in range(MIN_SEEDS, SEEDS_CAP + 1):
        if power(abs(mean), sigma, size, alpha) >= POWER:
            return str(size)
    return f"> {SEEDS_CAP}"


def classify(
    stats_low: float, stats_high: float, mean: float, p_holm: float, n: int, delta: float
) -> str:
    """The verdict from the TOST interval (low, high), the mean and the Holm-adjusted p."""
    if n < MIN_SEEDS or not math.isfinite(mean):
        return UNDETERMINED
    if -delta < stats_low and stats_high < delta:
        return EQUIVALENT
    if math.isfinite(p_holm) and p_holm < ALPHA:
        return BETTER if mean > 0 else WORSE
    return UNDETERMINED


def family_verdicts(
    found: Sequence[tuple[float, float, int]], delta: float
) -> list[dict[str, float | str]]:
    """The rule applied to one family of comparisons, each (mean, se, n): per comparison its
    two-sided p, Holm-adjusted p over the family, the (1 − 2·ALPHA) TOST interval and the
    verdict (`classify`)."""
    p_values = [t_p_value(mean, se, n) for mean, se, n in found]
    rows = []
    for (mean, se, n), p, ph in zip(found, p_values, holm(p_values), strict=True):
        tost_low, tost_high = t_bounds(mean, se, n, 1.0 - ALPHA)
        verdict = classify(tost_low, tost_high, mean, ph, n, delta)
        rows.append(
            {"tost_low": tost_low, "tost_high": tost_high, "p": p, "p_holm": ph, "verdict": verdict}
        )
    return rows


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
) -> pd.DataFrame:
    """tables/verdicts.csv: one row per declared comparison, rate and tested metric
    (VERDICT_COLUMNS). low/high: the (1 − ALPHA) interval, tost_low/tost_high the (1 − 2·ALPHA)
    one, both mean ± t · jackknife SE with n − 1 degrees of freedom."""
    rates = sorted({rate for _, rate, _ in adjusted.values})
    comparisons = declared_pairs(variants, baseline, pairs)
    rows = []
    for rate in rates:
        for metric in metrics:
            found = [
                paired_difference(adjusted, a, b, rate, metric, 1 - ALPHA)
                for a, b, _ in comparisons
            ]
            p_values = [t_p_value(mean, se, n) for mean, se, n, _ in found]
            p_holm = holm(p_values)
            family = f"C = {rate:g}, {metric}: {len(comparisons)} comparisons"
            for (a, b, kind), (mean, se, n, _), p, ph in zip(
                comparisons, found, p_values, p_holm, strict=True
            ):
                low, high = t_bounds(mean, se, n, 1.0 - ALPHA / 2.0)
                tost_low, tost_high = t_bounds(mean, se, n, 1.0 - ALPHA)
                verdict = classify(tost_low, tost_high, mean, ph, n, deltas[metric])
                sd = se * math.sqrt(n) if math.isfinite(se) else math.nan
                needed = (
                    replicates_needed(mean, sd, n, ALPHA / len(comparisons))
                    if verdict == UNDETERMINED
                    else ""
                )
                rows.append(
                    {
                        "rate": rate,
                        "metric": metric,
                        "a": a,
                        "b": b,
                        "comparison": kind,
                        "mean_diff": mean,
                        "low": low,
                        "high": high,
                        "tost_low": tost_low,
                        "tost_high": tost_high,
                        "se": se,
                        "n": n,
                        "p": p,
                        "p_holm": ph,
                        "family": family,
                        "delta": deltas[metric],
                        "verdict": verdict,
                        "replicates_needed": needed,
                    }
                )
    return pd.DataFrame(rows, columns=VERDICT_COLUMNS)


def t_bounds(mean: float, se: float, n: int, level: float) -> tuple[float, float]:
    if n < 2 or not (math.isfinite(mean) and math.isfinite(se)):
        return math.nan, math.nan
    half = float(student_t.ppf(level, df=n - 1)) * se
    return mean - half, mean + half


def t_p_value(mean: float, se: float, n: int) -> float:
    """Two-sided p of mean/SE against t_{n−1}; 0 or 1 with zero SE; NaN with n < 2."""
    if n < 2 or not (math.isfinite(mean) and math.isfinite(se)):
        return math.nan
    if se == 0.0:
        return 0.0 if mean != 0.0 else 1.0
    return float(2.0 * student_t.sf(abs(mean / se), df=n - 1))


def seeds_for_half_width(sd: float, target: float, confidence: float) -> int | None:
    """Smallest n ≥ 2 with t_{(1+c)/2, n−1} · sd/√n ≤ target (None beyond SEEDS_CAP)."""
    if not math.isfinite(sd):
        return None
    for n in range(2, SEEDS_CAP + 1):
        if half_width(sd, n, 0.5 + confidence / 2.0) <= target:
            return n
    return None


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
        rows.append(
            {
                "variant": variant,
                "rate": rate,
                "mean": stats.mean,
                "sd": sd,
                "n": stats.n,
                "half_width": (stats.high - stats.low) / 2.0,
                "target": target,
                "seeds_needed": needed_text,
            }
        )
    return pd.DataFrame(rows, columns=HALF_WIDTH_COLUMNS)
