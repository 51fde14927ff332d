"""The exact-rate adjustment against hand computations (docs/method.md#exact-rate-adjustment)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from zgain.results.analysis.adjust import (
    adjust_results,
    adjust_to_rate,
    adjustment_table,
    frontier_slopes,
    jackknife,
    with_adjusted,
)
from zgain.results.load.runs import EvalResults


def test_slopes_central_inside_one_sided_at_the_ends() -> None:
    slopes = frontier_slopes([0.3, 0.6, 1.1, 2.0], [0.1, 0.4, 0.6, 0.9])
    # ends: (0.4 − 0.1)/(0.6 − 0.3) = 1 and (0.9 − 0.6)/(2.0 − 1.1) = 1/3; inside: central
    expected = [1.0, (0.6 - 0.1) / (1.1 - 0.3), (0.9 - 0.4) / (2.0 - 0.6), 1.0 / 3.0]
    assert slopes == pytest.approx(expected, rel=1e-12)


def test_one_rate_has_no_slope_and_equal_kls_none_either() -> None:
    assert np.isnan(frontier_slopes([1.0], [0.5])).all()
    assert np.isnan(frontier_slopes([1.0, 1.0], [0.5, 0.7])).all()


def test_adjust_moves_each_seed_along_the_slope() -> None:
    got = adjust_to_rate(np.array([0.5, 0.6, 0.7]), np.array([0.9, 1.0, 1.2]), 1.0, 0.7)
    # 0.5 + 0.7·0.1, 0.6 + 0, 0.7 − 0.7·0.2
    assert got == pytest.approx([0.57, 0.6, 0.56], rel=1e-12)
    unchanged = adjust_to_rate(np.array([0.5, 0.6]), np.array([0.9, 1.1]), 1.0, math.nan)
    assert unchanged == pytest.approx([0.5, 0.6])


def results(rate: float, kl: tuple, capture: tuple) -> EvalResults:
    runs = pd.DataFrame(
        {
            "variant": "v",
            "seed": [0, 1],
            "kl": kl,
            "capture": capture,
            "z_information": [10 * c for c in capture],
            "marginal_gain": [0.0, 0.0],
        }
    )
    return EvalResults(("v",), (0, 1), rate, runs, pd.DataFrame(), pd.DataFrame())


def test_adjust_results_by_hand() -> None:
    by_rate = {
        1.0: results(1.0, (0.9, 1.1), (0.5, 0.7)),  # means kl 1.0, capture 0.6
        0.5: results(0.5, (0.4, 0.6), (0.3, 0.3)),  # means kl 0.5, capture 0.3
    }
    adjusted = adjust_results(by_rate, exclude_off_target=False)  # 0.4 and 0.6 are 20% off
    assert adjusted.adjusted
    slope = (0.6 - 0.3) / (1.0 - 0.5)  # one-sided at both ends of a two-rate grid: 0.6
    assert adjusted.slopes[("v", 1.0, "capture")] == pytest.approx(slope)
    assert adjusted.of("v", 1.0, "capture") == pytest.approx([0.5 + 0.06, 0.7 - 0.06])
    assert adjusted.of("v", 0.5, "capture") == pytest.approx([0.3 + 0.06, 0.3 - 0.06])
    assert adjusted.of("v", 1.0, "z_information") == pytest.approx([5.6, 6.4])
    assert adjusted.slopes[("v", 1.0, "marginal_gain")] == 0.0
    table = adjustment_table(adjusted, 0.95)
    row = table[(table["rate"] == 1.0) & (table["metric"] == "capture")].iloc[0]
    assert (row["mean"], row["n"]) == (pytest.approx(0.6), 2)


def test_one_rate_is_not_adjusted() -> None:
    adjusted = adjust_results({1.0: results(1.0, (0.9, 1.1), (0.5, 0.7))})
    assert not adjusted.adjusted
    assert adjusted.of("v", 1.0, "capture") == pytest.approx([0.5, 0.7])


def test_decomposition_gains_adjusted_columns_beside_raw() -> None:
    decomposition = pd.DataFrame(
        {
            "variant": ["base", "v", "v"],
            "metric": ["capture", "capture", "gross_gain"],
            "mean": [0.0, 0.6, 1.0],
            "low": [math.nan, 0.1, 0.5],
            "high": [math.nan, 1.1, 1.5],
            "n": [0, 2, 2],
            "kind": ["definition", "seeds", "seeds"],
            "source": ["definition", "capture", "gross_gain"],
        }
    )
    adjustment = pd.DataFrame(
        {
            "variant": ["v"],
            "rate": [1.0],
            "metric": ["capture"],
            "slope": [0.6],
            "mean": [0.61],
            "low": [0.2],
            "high": [1.0],
            "n": [2],
        }
    )
    table = with_adjusted(decomposition, adjustment, 1.0)
    assert list(table.columns[:6]) == ["variant", "metric", "mean", "low", "high", "n"]
    assert table["adjusted_mean"].tolist()[1] == pytest.approx(0.61)
    assert table["adjusted_low"].tolist()[1] == pytest.approx(0.2)
    assert np.isnan(table["adjusted_mean"].tolist()[0])  # a reference row
    assert np.isnan(table["adjusted_mean"].tolist()[2])  # a metric that is not adjusted


def three_seeds(rate: float, kl: tuple, capture: tuple) -> EvalResults:
    runs = pd.DataFrame(
        {
            "variant": "v",
            "seed": [0, 1, 2],
            "kl": kl,
            "kl_target": rate,
            "capture": capture,
            "z_information": capture,
            "marginal_gain": [0.0, 0.0, 0.0],
        }
    )
    return EvalResults(("v",), (0, 1, 2), rate, runs, pd.DataFrame(), pd.DataFrame())


def test_a_run_off_its_target_is_left_out_of_its_rate() -> None:
    by_rate = {
        1.0: three_seeds(1.0, (0.95, 1.05, 1.3), (0.5, 0.7, 0.9)),  # seed 2 is 30% off
        0.5: three_seeds(0.5, (0.5, 0.5, 0.5), (0.3, 0.3, 0.3)),
    }
    adjusted = adjust_results(by_rate)
    assert np.isnan(adjusted.of("v", 1.0, "capture")[2])
    assert adjusted.excluded[("v", 1.0)].tolist() == [False, False, True]
    # the slope comes from the kept runs: (0.6 − 0.3) / (1.0 − 0.5)
    assert adjusted.slopes[("v", 1.0, "capture")] == pytest.approx(0.6)
    row = adjustment_table(adjusted, 0.95).query("rate == 1.0 and metric == 'capture'").iloc[0]
    assert (row["n"], row["excluded"]) == (2, 1)


def test_the_jackknife_redoes_the_slope_without_each_seed() -> None:
    by_rate = {
        1.0: three_seeds(1.0, (0.92, 1.0, 1.08), (0.50, 0.62, 0.71)),
        0.5: three_seeds(0.5, (0.45, 0.5, 0.55), (0.20, 0.35, 0.33)),
    }
    adjusted = adjust_results(by_rate)
    stats, se = jackknife(
        adjusted, lambda adj: float(np.nanmean(adj.of("v", 1.0, "capture"))), [0, 1, 2], 0.95
    )
    # by hand: leave seed j out, slope from the other two seeds' means, adjust, average
    kl1, c1 = np.array([0.92, 1.0, 1.08]), np.array([0.50, 0.62, 0.71])
    kl2, c2 = np.array([0.45, 0.5, 0.55]), np.array([0.20, 0.35, 0.33])
    loo = []
    for j in range(3):
        keep = [i for i in range(3) if i != j]
        slope = (c1[keep].mean() - c2[keep].mean()) / (kl1[keep].mean() - kl2[keep].mean())
        loo.append(np.mean(c1[keep] + slope * (1.0 - kl1[keep])))
    expected_se = math.sqrt(2 / 3 * np.sum((np.array(loo) - np.mean(loo)) ** 2))
    assert se == pytest.approx(expected_se, rel=1e-12)
    half = 4.302652729749464 * expected_se  # t_{0.975, 2}
    assert (stats.low, stats.high) == pytest.approx((stats.mean - half, stats.mean + half))
    # with the slope fixed the jackknife SE is the plain s/√n; a varying slope adds to it here
    plain = np.std(adjusted.of("v", 1.0, "capture"), ddof=1) / math.sqrt(3)
    assert se > plain
