"""The t-interval helpers against hand computations (docs/method.md#uncertainty-over-seeds)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from zgain.report.markdown import method_label, percent
from zgain.report.statistics import finite_mean, paired_differences, t_interval, t_quantile

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


def test_method_label() -> None:
    assert method_label(3, 0.95) == "mean over 3 seeds, 95% t-interval"
    assert "no interval" in method_label(1, 0.95)
    assert percent(0.975) == "97.5%"


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
