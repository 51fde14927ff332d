"""Verdicts of the pairwise comparisons at equal rate (docs/method.md#verdicts).

At every target rate and on each of ADJUSTED_METRICS, every variant is compared with the
baseline and the leading variants with each other, on the seed-paired differences a_s − b_s of
the values adjusted to exactly the rate (zgain.report.adjust). Each comparison ends in one
verdict, tried in this order:

- `better` / `worse`: the two-sided paired t-test rejects at ALPHA after Holm's step-down
  adjustment over the comparisons of one table (one rate × one metric);
- `equivalent`: the (1 − 2·ALPHA) t-interval of the difference lies inside ±δ (TOST at ALPHA),
  δ per metric from report.equivalence;
- `undetermined`: neither, or fewer than MIN_SEEDS seeds; `seeds_needed` then says how many
  seeds the observed spread would need for a separation or an equivalence.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy.stats import t as student_t

from zgain.report.adjust import ADJUSTED_METRICS, Adjusted
from zgain.report.statistics import finite_mean, t_interval

ALPHA = 0.05  # level of the paired tests (two-sided) and of each one-sided TOST test
MIN_SEEDS = 3  # fewer seeds than this: every verdict is undetermined
SEEDS_CAP = 100  # seeds_needed beyond this is written as "> SEEDS_CAP"
BETTER, WORSE, EQUIVALENT, UNDETERMINED = "better", "worse", "equivalent", "undetermined"
BASELINE_PAIR, LEADER_PAIR = "baseline", "leaders"
VERDICT_COLUMNS = [
    "rate",
    "metric",
    "a",
    "b",
    "comparison",
    "mean_diff",
    "low",
    "high",
    "n",
    "p",
    "p_holm",
    "delta",
    "verdict",
    "seeds_needed",
    "needed_for",
]
HALF_WIDTH_COLUMNS = ["variant", "rate", "mean", "sd", "n", "half_width", "target", "seeds_needed"]


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
    mean, sd = float(d.mean()), float(d.std(ddof=1))
    if sd == 0.0:
        return 0.0 if mean != 0.0 else 1.0
    statistic = mean / (sd / math.sqrt(d.size))
    return float(2.0 * student_t.sf(abs(statistic), df=d.size - 1))


def half_width(sd: float, n: int, level: float) -> float:
    """t_{level, n−1} · sd / √n: the half-width of a t-interval whose one-sided level is `level`."""
    return float(student_t.ppf(level, df=n - 1)) * sd / math.sqrt(n)


def seeds_to_separate(mean: float, sd: float, alpha: float) -> int | None:
    """Smallest n ≥ MIN_SEEDS with t_{1−α/2, n−1} · sd/√n < |mean| (None beyond SEEDS_CAP)."""
    if not (math.isfinite(mean) and math.isfinite(sd)) or mean == 0.0:
        return None
    for n in range(MIN_SEEDS, SEEDS_CAP + 1):
        if half_width(sd, n, 1.0 - alpha / 2.0) < abs(mean):
            return n
    return None


def seeds_for_equivalence(mean: float, sd: float, delta: float) -> int | None:
    """Smallest n ≥ MIN_SEEDS with |mean| + t_{1−ALPHA, n−1} · sd/√n < δ (None beyond
    SEEDS_CAP, or when |mean| ≥ δ: no number of seeds makes that difference equivalent)."""
    if not (math.isfinite(mean) and math.isfinite(sd)) or abs(mean) >= delta:
        return None
    for n in range(MIN_SEEDS, SEEDS_CAP + 1):
        if abs(mean) + half_width(sd, n, 1.0 - ALPHA) < delta:
            return n
    return None


def classify(diffs: np.ndarray, p_holm: float, delta: float) -> str:
    """The verdict of one comparison from its per-seed differences and Holm-adjusted p."""
    d = np.asarray(diffs, dtype=np.float64)
    d = d[np.isfinite(d)]
    if d.size < MIN_SEEDS:
        return UNDETERMINED
    mean = float(d.mean())
    if math.isfinite(p_holm) and p_holm < ALPHA:
        return BETTER if mean > 0 else WORSE
    tost = t_interval(d, 1.0 - 2.0 * ALPHA)
    if -delta < tost.low and tost.high < delta:
        return EQUIVALENT
    return UNDETERMINED


def seeds_needed(diffs: np.ndarray, delta: float, n_pairs: int) -> tuple[str, str]:
    """(seeds, what for) of an undetermined comparison: the fewer seeds of a separation at the
    Bonferroni level ALPHA / n_pairs (which Holm never asks more than) and an equivalence."""
    d = np.asarray(diffs, dtype=np.float64)
    d = d[np.isfinite(d)]
    if d.size < 2:
        return "", ""
    mean, sd = float(d.mean()), float(d.std(ddof=1))
    options = [
        (n, why)
        for n, why in (
            (seeds_to_separate(mean, sd, ALPHA / max(n_pairs, 1)), "separation"),
            (seeds_for_equivalence(mean, sd, delta), "equivalence"),
        )
        if n is not None
    ]
    if not options:
        return f"> {SEEDS_CAP}", ""
    n, why = min(options)
    return str(n), why


def leading_variants(
    adjusted: Adjusted, variants: Sequence[str], rate: float, k: int, metric: str = "capture"
) -> list:
    """The k variants with the highest adjusted `metric` mean at `rate`, best first."""
    means = {v: finite_mean(adjusted.of(v, rate, metric)) for v in variants}
    ranked = sorted((v for v in variants if math.isfinite(means[v])), key=lambda v: -means[v])
    return ranked[:k]


def comparison_pairs(
    variants: Sequence[str], baseline: str, leaders: Sequence[str]
) -> list[tuple[str, str, str]]:
    """(a, b, kind) per comparison a − b: each variant against the baseline, then every pair of
    leaders (higher first) not already compared through the baseline."""
    pairs = [(v, baseline, BASELINE_PAIR) for v in variants if v != baseline]
    for i, a in enumerate(leaders):
        for b in leaders[i + 1 :]:
            if baseline not in (a, b):
                pairs.append((a, b, LEADER_PAIR))
    return pairs


def verdict_table(
    adjusted: Adjusted,
    variants: Sequence[str],
    baseline: str,
    n_leaders: int,
    deltas: Mapping[str, float],
    metrics: Sequence[str] = ADJUSTED_METRICS,
    rank_metric: str = "capture",
) -> pd.DataFrame:
    """tables/verdicts.csv: one row per comparison, rate and metric (VERDICT_COLUMNS); low/high
    is the (1 − ALPHA) paired t-interval of the adjusted differences. The leaders are the top
    variants by `rank_metric`."""
    rates = sorted({rate for _, rate, _ in adjusted.values})
    rows = []
    for rate in rates:
        pairs = comparison_pairs(
            variants, baseline, leading_variants(adjusted, variants, rate, n_leaders, rank_metric)
        )
        for metric in metrics:
            diffs = [
                adjusted.of(a, rate, metric) - adjusted.of(b, rate, metric) for a, b, _ in pairs
            ]
            p_holm = holm([paired_p(d) for d in diffs])
            for (a, b, kind), d, ph in zip(pairs, diffs, p_holm, strict=True):
                stats = t_interval(d, 1.0 - ALPHA)
                verdict = classify(d, ph, deltas[metric])
                needed = seeds_needed(d, deltas[metric], len(pairs))
                rows.append(
                    {
                        "rate": rate,
                        "metric": metric,
                        "a": a,
                        "b": b,
                        "comparison": kind,
                        "mean_diff": stats.mean,
                        "low": stats.low,
                        "high": stats.high,
                        "n": stats.n,
                        "p": paired_p(d),
                        "p_holm": ph,
                        "delta": deltas[metric],
                        "verdict": verdict,
                        "seeds_needed": needed[0] if verdict == UNDETERMINED else "",
                        "needed_for": needed[1] if verdict == UNDETERMINED else "",
                    }
                )
    return pd.DataFrame(rows, columns=VERDICT_COLUMNS)


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
