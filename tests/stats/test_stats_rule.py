"""The verdict rule against hand computations: Holm, the paired test, TOST at 1 − 2α, classify
and decide (docs/method.md#verdicts)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from zgain.stats.rule import (
    BETTER,
    EQUIVALENT,
    UNDETERMINED,
    WORSE,
    Evidence,
    alpha_of,
    classify,
    decide,
    holm,
    paired_p,
    t_p_value,
    tost_level,
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
    assert classify(0.9, 1.1, 1.0, 0.0, 2, 0.05, 0.05) == UNDETERMINED


def test_inside_the_margin_is_equivalent_even_when_the_test_rejects() -> None:
    assert classify(-0.01, 0.01, 0.0, 1.0, 3, 0.05, 0.05) == EQUIVALENT
    assert classify(0.009, 0.011, 0.01, 0.001, 3, 0.05, 0.05) == EQUIVALENT  # never "better"


def test_clear_separation_better_and_worse() -> None:
    assert classify(0.8, 1.2, 1.0, 0.003, 3, 0.05, 0.05) == BETTER
    assert classify(-1.2, -0.8, -1.0, 0.003, 3, 0.05, 0.05) == WORSE
    assert classify(0.8, 1.2, 1.0, 0.06, 3, 0.05, 0.05) == UNDETERMINED  # Holm took it back


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


def test_the_tost_level_is_one_minus_two_alpha() -> None:
    assert alpha_of(0.95) == 0.05 and alpha_of(0.9) == 0.1
    assert tost_level(0.95) == pytest.approx(0.90, abs=1e-15)
    assert tost_level(0.9) == pytest.approx(0.80, abs=1e-15)


def test_t_p_value_by_hand() -> None:
    # t = 2 on 2 df: P(|T| > 2) = 1 − 2/√(2 + 4) (the t_2 cdf is 1/2 + t / (2√(2 + t²)))
    assert t_p_value(2.0, 1.0, 3) == pytest.approx(1 - 2 / math.sqrt(6), rel=1e-12)
    assert t_p_value(0.0, 0.0, 3) == 1.0 and t_p_value(1.0, 0.0, 3) == 0.0
    assert math.isnan(t_p_value(1.0, 1.0, 1))
