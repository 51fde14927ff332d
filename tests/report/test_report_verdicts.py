"""Verdicts: Holm, the paired test, TOST and the seeds needed, against hand computations
(docs/method.md#verdicts)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from zgain.report.render.markdown import legend
from zgain.results.analysis.adjust import ADJUSTED_METRICS, Adjusted, adjust_results
from zgain.results.analysis.verdicts import (
    declared_pairs,
    half_width_table,
    verdict_table,
)
from zgain.results.load.runs import EvalResults
from zgain.stats.rule import (
    BETTER,
    UNDETERMINED,
    paired_p,
)

P_123 = 0.07417990022744857  # two-sided p of t = 2 / (1/√3) = 3.4641 on 2 df (t table)


def test_declared_pairs_are_the_baseline_ones_then_params() -> None:
    pairs = declared_pairs(["base", "a", "b", "c"], "base", [["c", "a"], ["a", "base"]])
    assert pairs == [
        ("a", "base", "baseline"),
        ("b", "base", "baseline"),
        ("c", "base", "baseline"),
        ("c", "a", "declared"),
    ]


def fake_adjusted(per_variant: dict[str, list[float]], rate: float = 1.0) -> Adjusted:
    """One rate, every run exactly at it: the adjusted values are the raw ones."""
    n = len(next(iter(per_variant.values())))
    runs = pd.DataFrame(
        [
            {"variant": v, "seed": s, "kl": rate, **dict.fromkeys(ADJUSTED_METRICS, x[s])}
            for v, x in per_variant.items()
            for s in range(len(x))
        ]
    )
    variants, seeds = tuple(per_variant), tuple(range(n))
    return adjust_results({rate: EvalResults(variants, seeds, rate, runs, None, None)})


def test_verdict_table_holm_over_one_rate_and_metric() -> None:
    adjusted = fake_adjusted({"base": [0.0, 0.0, 0.0], "a": [1.0, 2.0, 3.0], "b": [1.0, 1.1, 0.9]})
    deltas = dict.fromkeys(ADJUSTED_METRICS, 0.05)
    metrics = ("capture", "marginal_gain")
    table = verdict_table(adjusted, ["base", "a", "b"], "base", [["a", "b"]], deltas, metrics, 0.95)
    capture = table[table["metric"] == "capture"].set_index(["a", "b"])
    assert list(capture.index) == [("a", "base"), ("b", "base"), ("a", "b")]
    # with the slope fixed the jackknife SE of a mean is s/√n: the paired t-test's p
    p_b = paired_p(np.array([1.0, 1.1, 0.9]))
    p_ab = paired_p(np.array([0.0, 0.9, 2.1]))
    assert capture.loc[("b", "base"), "p"] == pytest.approx(p_b)
    assert capture.loc[("b", "base"), "p_holm"] == pytest.approx(3 * p_b)
    assert capture.loc[("a", "base"), "p_holm"] == pytest.approx(max(2 * P_123, 3 * p_b))
    assert capture.loc[("a", "b"), "p_holm"] == pytest.approx(max(p_ab, 2 * P_123, 3 * p_b))
    assert capture.loc[("b", "base"), "verdict"] == BETTER
    assert capture.loc[("a", "base"), "verdict"] == UNDETERMINED
    assert capture.loc[("a", "base"), "replicates_needed"] != ""
    assert capture.loc[("a", "base"), "mean_diff"] == pytest.approx(2.0)
    assert capture.loc[("a", "base"), "se"] == pytest.approx(1.0 / math.sqrt(3))
    assert capture.loc[("b", "base"), "replicates_needed"] == ""
    assert set(table["family"]) == {
        "C = 1, capture: 3 comparisons",
        "C = 1, marginal_gain: 3 comparisons",
    }
    assert len(table) == 3 * len(metrics)


def test_half_width_table_by_hand() -> None:
    adjusted = fake_adjusted({"a": [0.5, 0.53, 0.56], "b": [0.4]})
    table = half_width_table(adjusted, ["a", "b"], 1.0, 0.05, 0.95).set_index("variant")
    # sd 0.03, half-width t_{0.975,2}·0.03/√3 = 0.07453; ±0.05 needs 4 seeds
    assert table.loc["a", "half_width"] == pytest.approx(4.302652729749464 * 0.03 / math.sqrt(3))
    assert table.loc["a", "seeds_needed"] == "4"
    assert table.loc["b", "seeds_needed"] == "" and math.isnan(table.loc["b", "sd"])


def test_legend_names_the_tost_level() -> None:
    assert legend(0.95) == "▲ better ▼ worse ≈ equivalent (90% interval) ? undetermined"
    assert "(80% interval)" in legend(0.9)
