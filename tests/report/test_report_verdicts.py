"""Verdicts: Holm, the paired test, TOST and the seeds needed, against hand computations
(docs/method.md#verdicts)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from zgain.report.adjust import ADJUSTED_METRICS, Adjusted
from zgain.report.verdicts import (
    BETTER,
    EQUIVALENT,
    UNDETERMINED,
    WORSE,
    classify,
    comparison_pairs,
    half_width_table,
    holm,
    paired_p,
    seeds_for_equivalence,
    seeds_for_half_width,
    seeds_needed,
    seeds_to_separate,
    verdict_table,
)

P_123 = 0.07417990022744857  # two-sided p of t = 2 / (1/√3) = 3.4641 on 2 df (t table)


def test_holm_by_hand() -> None:
    # sorted 0.005, 0.01, 0.03, 0.04 -> ×4 = 0.02, ×3 = 0.03, ×2 = 0.06, ×1 = 0.04 -> max 0.06
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    got = holm([0.5, math.nan, 0.2])  # m = 2: 0.2·2 = 0.4, then max(0.4, 0.5·1)
    assert got[0] == pytest.approx(0.5) and math.isnan(got[1]) and got[2] == pytest.approx(0.4)
    assert holm([0.9, 0.8]) == pytest.approx([1.0, 1.0])  # capped at 1


def test_paired_p_by_hand() -> None:
    assert paired_p(np.array([1.0, 2.0, 3.0])) == pytest.approx(P_123, rel=1e-9)
    assert paired_p(np.array([0.0, 0.0, 0.0])) == 1.0  # exactly equal
    assert paired_p(np.array([0.25, 0.25, 0.25])) == 0.0  # no spread, nonzero mean
    assert math.isnan(paired_p(np.array([0.3])))


def test_fewer_than_three_seeds_is_undetermined() -> None:
    assert classify(np.array([1.0, 1.0]), 0.0, 0.05) == UNDETERMINED
    assert classify(np.array([0.0, 0.0, math.nan]), 1.0, 0.05) == UNDETERMINED


def test_exactly_equal_pair_is_equivalent() -> None:
    assert classify(np.zeros(3), 1.0, 0.05) == EQUIVALENT


def test_clear_separation_better_and_worse() -> None:
    d = np.array([1.0, 1.1, 0.9])
    p = paired_p(d)  # t = 1 / (0.1/√3) = 17.3 on 2 df: p ≈ 0.00332
    assert p == pytest.approx(0.0033168, rel=1e-4)
    assert classify(d, p, 0.05) == BETTER and classify(-d, p, 0.05) == WORSE
    assert classify(d, 0.06, 0.05) == UNDETERMINED  # Holm took it back; far outside ±δ


def test_clear_equivalence_and_undetermined() -> None:
    # 90% interval: 0 ± t_{0.95,2}·0.001/√3 = ±0.00169, inside ±0.05
    assert classify(np.array([0.001, -0.001, 0.0]), 1.0, 0.05) == EQUIVALENT
    assert classify(np.array([0.1, -0.1, 0.2]), 0.6, 0.05) == UNDETERMINED


def test_seeds_needed_by_hand() -> None:
    # t_{0.975,n−1}·0.03/√n: n=4 0.0477, n=5 0.0372 < 0.04
    assert seeds_to_separate(0.04, 0.03, 0.05) == 5
    # t_{0.95,n−1}·0.03/√n: n=3 0.0506, n=4 0.0353 < 0.05
    assert seeds_for_equivalence(0.0, 0.03, 0.05) == 4
    assert seeds_for_equivalence(0.06, 0.001, 0.05) is None  # |mean| ≥ δ: never
    assert seeds_to_separate(0.001, 1.0, 0.05) is None  # beyond the cap
    # t_{0.975,n−1}·0.03/√n ≤ 0.05: n=3 0.0745, n=4 0.0477
    assert seeds_for_half_width(0.03, 0.05, 0.95) == 4
    # diffs 0.01, 0.03, 0.05: mean 0.03, sd 0.02; equivalence: n=3 0.03 + 0.0337 > 0.05,
    # n=4 0.03 + 0.0235 > 0.05, n=5 0.03 + 0.0191 < 0.05; separation at 0.05/2 needs 6
    assert seeds_needed(np.array([0.01, 0.03, 0.05]), 0.05, 2) == ("5", "equivalence")
    assert seeds_needed(np.array([0.001, 0.9, -0.9]), 0.05, 1) == ("> 100", "")


def test_pairs_against_the_baseline_then_between_leaders() -> None:
    pairs = comparison_pairs(["base", "a", "b", "c"], "base", ["c", "base", "a"])
    assert pairs == [
        ("a", "base", "baseline"),
        ("b", "base", "baseline"),
        ("c", "base", "baseline"),
        ("c", "a", "leaders"),
    ]


def fake_adjusted(per_variant: dict[str, list[float]], rate: float = 1.0) -> Adjusted:
    values = {
        (v, rate, m): np.asarray(x, dtype=float)
        for v, x in per_variant.items()
        for m in ADJUSTED_METRICS
    }
    return Adjusted(values=values, slopes=dict.fromkeys(values, 0.0), adjusted=True)


def test_verdict_table_holm_over_one_table() -> None:
    adjusted = fake_adjusted({"base": [0.0, 0.0, 0.0], "a": [1.0, 2.0, 3.0], "b": [1.0, 1.1, 0.9]})
    deltas = dict.fromkeys(ADJUSTED_METRICS, 0.05)
    table = verdict_table(adjusted, ["base", "a", "b"], "base", 2, deltas)
    capture = table[table["metric"] == "capture"].set_index(["a", "b"])
    assert list(capture.index) == [("a", "base"), ("b", "base"), ("a", "b")]
    p_b = paired_p(np.array([1.0, 1.1, 0.9]))
    p_ab = paired_p(np.array([0.0, 0.9, 2.1]))
    assert capture.loc[("b", "base"), "p_holm"] == pytest.approx(3 * p_b)
    assert capture.loc[("a", "base"), "p_holm"] == pytest.approx(max(2 * P_123, 3 * p_b))
    assert capture.loc[("a", "b"), "p_holm"] == pytest.approx(max(p_ab, 2 * P_123, 3 * p_b))
    assert capture.loc[("b", "base"), "verdict"] == BETTER
    assert capture.loc[("a", "base"), "verdict"] == UNDETERMINED
    assert capture.loc[("a", "base"), "mean_diff"] == pytest.approx(2.0)
    assert capture.loc[("b", "base"), "seeds_needed"] == ""
    assert len(table) == 3 * len(ADJUSTED_METRICS)


def test_half_width_table_by_hand() -> None:
    adjusted = fake_adjusted({"a": [0.5, 0.53, 0.56], "b": [0.4]})
    table = half_width_table(adjusted, ["a", "b"], 1.0, 0.05, 0.95).set_index("variant")
    # sd 0.03, half-width t_{0.975,2}·0.03/√3 = 0.07453; ±0.05 needs 4 seeds
    assert table.loc["a", "half_width"] == pytest.approx(4.302652729749464 * 0.03 / math.sqrt(3))
    assert table.loc["a", "seeds_needed"] == "4"
    assert table.loc["b", "seeds_needed"] == "" and math.isnan(table.loc["b", "sd"])
