"""zgain.stats.intervals against hand computations: t quantiles from the table, a 3-value
jackknife, the χ² bound on a spread and an interval clipped to a range
(docs/method.md#uncertainty-over-seeds)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from zgain.stats.intervals import (
    Interval,
    clip,
    finite_mean,
    jackknife,
    jackknife_se,
    mean_se,
    paired_differences,
    spread_upper_bound,
    t_bounds,
    t_interval,
    t_quantile,
)

T_975_2 = 4.302652729749464  # t_{0.975, 2}: two-sided 95%, 2 degrees of freedom (t table)


T_975_1 = 12.706204736174698  # t_{0.975, 1}


def test_t_quantile_matches_the_table() -> None:
    assert t_quantile(0.95, 3) == pytest.approx(T_975_2, rel=1e-9)
    assert t_quantile(0.95, 1000) == pytest.approx(1.962, abs=1e-3)  # near the normal 1.96
    with pytest.raises(ValueError):
        t_quantile(0.95, 1)


def test_three_seeds_by_hand() -> None:
    stats = t_interval(np.array([1.0, 2.0, 3.0]), 0.95)
    half = T_975_2 * 1.0 / math.sqrt(3)  # sample sd of 1, 2, 3 is 1
    assert stats.mean == pytest.approx(2.0)
    assert (stats.low, stats.high) == pytest.approx((2.0 - half, 2.0 + half), rel=1e-9)
    assert stats.n == 3 and stats.has_interval


def test_one_seed_has_no_interval() -> None:
    stats = t_interval(np.array([0.7]), 0.95)
    assert stats.mean == 0.7 and stats.n == 1
    assert math.isnan(stats.low) and math.isnan(stats.high)
    assert not stats.has_interval


def test_undefined_seeds_are_dropped() -> None:
    stats = t_interval(np.array([1.0, np.nan, 3.0]), 0.95)
    # two seeds left: sd √2, half-width t_{0.975,1} · √2 / √2 = t_{0.975,1}
    assert stats.n == 2 and stats.mean == 2.0
    assert stats.high - stats.mean == pytest.approx(T_975_1, rel=1e-9)
    empty = t_interval(np.array([np.nan]), 0.95)
    assert empty.n == 0 and math.isnan(empty.mean)
    assert math.isnan(finite_mean(np.array([np.nan])))
    assert finite_mean(np.array([1.0, np.nan, 3.0])) == 2.0


def test_zero_spread_gives_zero_width() -> None:
    stats = t_interval(np.array([4.0, 4.0, 4.0]), 0.95)
    assert (stats.low, stats.mean, stats.high) == (4.0, 4.0, 4.0)


def test_paired_differences_keep_seed_order() -> None:
    diffs = paired_differences(np.array([5.0, 6.5, 7.0]), np.array([1.0, 2.0, 3.0]))
    assert diffs.tolist() == [4.0, 4.5, 4.0]
    with pytest.raises(ValueError):
        paired_differences(np.zeros(3), np.zeros(2))


@pytest.mark.parametrize("n_seeds", [2, 3, 5])
def test_the_seed_interval_covers_the_procedure_mean_95_percent_of_the_time(n_seeds) -> None:
    """Simulated seeds: run means drawn from N(μ, σ²); the 95% t-interval should cover μ."""
    rng = np.random.default_rng(n_seeds)
    repetitions, mu = 4000, 0.3
    covered = 0
    for _ in range(repetitions):
        seeds = rng.normal(mu, 0.05, n_seeds)
        interval = t_interval(seeds, 0.95)
        covered += interval.low <= mu <= interval.high
    coverage = covered / repetitions
    assert abs(coverage - 0.95) < 0.012  # binomial sd at 4000 draws ≈ 0.0034


def test_t_quantiles_from_the_table() -> None:
    # two-sided 90% with 4 df: 2.131847; 99% with 9 df: 3.249836 (t table)
    assert t_quantile(0.90, 5) == pytest.approx(2.131847, abs=1e-6)
    assert t_quantile(0.99, 10) == pytest.approx(3.249836, abs=1e-6)
    with pytest.raises(ValueError):
        t_quantile(1.0, 5)


def test_a_three_value_jackknife_by_hand() -> None:
    # estimate: the mean of 1, 2, 6 = 3; leave-one-out means 4, 3.5, 1.5 (mean 3), deviations
    # 1, 0.5, −1.5, squares sum 3.5; SE² = (2/3) · 3.5 = 7/3 (= s²/n: s² of 1, 2, 6 is 7)
    assert jackknife_se([4.0, 3.5, 1.5]) == pytest.approx(math.sqrt(7.0 / 3.0), rel=1e-12)
    interval, se = jackknife(3.0, [4.0, 3.5, 1.5], 0.95)
    half = T_975_2 * math.sqrt(7.0 / 3.0)
    assert se == pytest.approx(math.sqrt(7.0 / 3.0), rel=1e-12)
    assert (interval.low, interval.high) == pytest.approx((3.0 - half, 3.0 + half), rel=1e-12)
    assert interval.n == 3 and interval.mean == 3.0
    assert mean_se(np.array([1.0, 2.0, 6.0]))[1] == pytest.approx(se, rel=1e-12)
    point, se = jackknife(3.0, [4.0], 0.95)
    assert not point.has_interval and math.isnan(se) and math.isnan(jackknife_se([1.0]))


def test_t_bounds_by_hand() -> None:
    low, high = t_bounds(2.0, 0.5, 3, 0.95)
    assert (low, high) == pytest.approx((2.0 - T_975_2 * 0.5, 2.0 + T_975_2 * 0.5), rel=1e-12)
    assert all(math.isnan(x) for x in t_bounds(2.0, 0.5, 1, 0.95))
    assert all(math.isnan(x) for x in t_bounds(math.nan, 0.5, 3, 0.95))


def test_spread_upper_bound_by_hand() -> None:
    # 2 df: P(χ² ≤ x) = 1 − e^{−x/2}, so χ²_{0.2, 2} = −2 ln 0.8; bound √(2 / χ²_{0.2,2})
    assert spread_upper_bound(1.0, 3, 0.8) == pytest.approx(math.sqrt(2 / (-2 * math.log(0.8))))
    assert math.isnan(spread_upper_bound(1.0, 1, 0.8))


def test_clip_keeps_the_interval_inside_the_range() -> None:
    clipped = clip(Interval(0.1, -0.2, 0.4, 3), 0.0, 1.0)
    assert (clipped.mean, clipped.low, clipped.high, clipped.n) == (0.1, 0.0, 0.4, 3)
    assert clip(Interval(0.9, 0.7, 1.3, 3), 0.0, 1.0).high == 1.0
    point = Interval.point(0.5, 1)
    assert clip(point, 0.0, 1.0) is point
