"""Verdicts: Holm, the paired test, TOST and the seeds needed, against hand computations
(docs/method.md#verdicts)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from zgain.report.adjust import ADJUSTED_METRICS, Adjusted, adjust_results
from zgain.report.loading import EvalResults
from zgain.report.markdown import legend
from zgain.report.statistics import (
    BETTER,
    EQUIVALENT,
    UNDETERMINED,
    WORSE,
    Evidence,
    classify,
    decide,
    holm,
    paired_p,
    spread_upper_bound,
    t_test_power,
)
from zgain.report.verdicts import (
    declared_pairs,
    half_width_table,
    replicates_needed,
    verdict_table,
)


def power(effect: float, sd: float, n: int, alpha: float) -> float:
    """The one-sample t-test's power at effect/sd with n replicates, two-sided level alpha."""
    return t_test_power(effect * math.sqrt(n) / sd, n, 1.0 - alpha)


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
    assert classify(0.9, 1.1, 1.0, 0.0, 2, 0.05, 0.05) == UNDETERMINED


def test_inside_the_margin_is_equivalent_even_when_the_test_rejects() -> None:
    assert classify(-0.01, 0.01, 0.0, 1.0, 3, 0.05, 0.05) == EQUIVALENT
    assert classify(0.009, 0.011, 0.01, 0.001, 3, 0.05, 0.05) == EQUIVALENT  # never "better"


def test_clear_separation_better_and_worse() -> None:
    assert classify(0.8, 1.2, 1.0, 0.003, 3, 0.05, 0.05) == BETTER
    assert classify(-1.2, -0.8, -1.0, 0.003, 3, 0.05, 0.05) == WORSE
    assert classify(0.8, 1.2, 1.0, 0.06, 3, 0.05, 0.05) == UNDETERMINED  # Holm took it back


def test_power_and_replicates_by_the_textbook() -> None:
    # one-sample t-test, d = 1, two-sided 5%: power 0.803 at n = 10, 0.737 at n = 9 (G*Power)
    assert power(1.0, 1.0, 10, 0.05) == pytest.approx(0.8031, abs=5e-4)
    assert power(1.0, 1.0, 9, 0.05) < 0.8
    # the 80% upper bound on σ from sd 1 on 3 values: √(2 / χ²_{0.2, 2}), χ²_{0.2,2} = −2 ln 0.8
    assert spread_upper_bound(1.0, 3, 0.8) == pytest.approx(math.sqrt(2 / (-2 * math.log(0.8))))
    sd = 1.0 / spread_upper_bound(1.0, 3, 0.8)  # so that the upper bound is exactly 1
    assert replicates_needed(1.0, sd, 3, 0.05) == "10"
    assert replicates_needed(0.001, 1.0, 3, 0.05) == "> 100"
    assert replicates_needed(1.0, math.nan, 1, 0.05) == ""


def test_power_by_simulation() -> None:
    rng = np.random.default_rng(0)
    draws = rng.normal(0.5, 1.0, size=(40_000, 12))
    t = draws.mean(1) / (draws.std(1, ddof=1) / math.sqrt(12))
    from scipy.stats import t as student_t

    rejected = np.mean(np.abs(t) > student_t.ppf(0.975, 11))
    assert power(0.5, 1.0, 12, 0.05) == pytest.approx(rejected, abs=0.01)


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


def test_power_is_finite_far_in_the_lower_tail() -> None:
    # nct.cdf(−t_{0.975,4}, 4, 10) is NaN with scipy 1.17: the lower tail, P(T < −t), must come
    # from nct.sf(t, 4, −10) instead. A true mean 10 SE from 0 on 5 replicates: power ≈ 1.
    got = t_test_power(10.0, 5, 0.95)
    assert math.isfinite(got) and got == pytest.approx(0.9999996155, abs=1e-9)
    assert math.isfinite(t_test_power(-10.0, 5, 0.95))
    assert t_test_power(-10.0, 5, 0.95) == pytest.approx(got, rel=1e-12)  # symmetric
    # the same replicates_needed as a power that never fails: 3 seeds at d = 10 suffice
    assert replicates_needed(10.0, 1.0 / spread_upper_bound(1.0, 5, 0.8), 5, 0.05) == "3"


def test_decide_is_holm_then_tost_then_the_test() -> None:
    family = [
        Evidence(0.5, 3, 0.01, 0.3, 0.7),  # Holm 0.03 < 0.05: better
        Evidence(-0.5, 3, 0.02, -0.7, -0.3),  # Holm 0.04: worse
        Evidence(0.001, 3, 0.001, -0.01, 0.01),  # inside ±0.05: equivalent though p is tiny
        Evidence(0.5, 3, 0.2, -0.1, 1.1),  # undetermined
    ]
    decided = decide(family, 0.05, 0.95)
    assert [v for _, v in decided] == [BETTER, WORSE, EQUIVALENT, UNDETERMINED]
    assert [p for p, _ in decided] == pytest.approx([0.03, 0.04, 0.004, 0.2])
    # at a 90% level α = 0.1: the interval levels and the test move together
    assert [v for _, v in decide(family[3:], 0.05, 0.9)] == [UNDETERMINED]


def test_evidence_from_values_is_the_t_interval_and_the_paired_test() -> None:
    e = Evidence.of_values(np.array([1.0, 2.0, 3.0]), 0.95)
    # the 90% TOST interval: 2 ± t_{0.95, 2} · 1/√3, t_{0.95, 2} = 2.919985580
    half = 2.919985580355516 / math.sqrt(3)
    assert (e.tost_low, e.tost_high) == pytest.approx((2 - half, 2 + half), rel=1e-9)
    assert e.p == pytest.approx(P_123, rel=1e-9) and e.n == 3 and e.mean == 2.0
    by_se = Evidence.of_se(2.0, 1 / math.sqrt(3), 3, 0.95)
    assert (by_se.tost_low, by_se.tost_high, by_se.p) == pytest.approx(
        (e.tost_low, e.tost_high, e.p)
    )


def test_legend_names_the_tost_level() -> None:
    assert legend(0.95) == "▲ better ▼ worse ≈ equivalent (90% interval) ? undetermined"
    assert "(80% interval)" in legend(0.9)
