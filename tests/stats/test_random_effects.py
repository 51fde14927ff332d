"""σ_B and σ_W intervals of a balanced layout: hand-computed mean squares and coverage."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import chi2

from zgain.stats.random_effects import component_intervals

# 3 bases x 2 seeds: base means 1, 2, 4 (grand 7/3); within deviations ±0.5, ±1, ±0
VALUES = np.array([[0.5, 1.5], [1.0, 3.0], [4.0, 4.0]])


def test_mean_squares_and_point_estimates_by_hand() -> None:
    got = component_intervals(VALUES, 0.95)
    # MS_W: sample variances 0.5, 2, 0 -> mean 5/6
    assert got.ms_within == pytest.approx(5 / 6)
    # MS_B: k * var(1, 2, 4) = 2 * ((4/3)^2 + (1/3)^2 + (5/3)^2) / 2 = 42/9
    assert got.ms_between == pytest.approx(42 / 9)
    assert got.sigma_w == pytest.approx(math.sqrt(5 / 6))
    assert got.sigma_b == pytest.approx(math.sqrt((42 / 9 - 5 / 6) / 2))
    # σ_W's χ² interval on 3 degrees of freedom
    assert got.sigma_w_low == pytest.approx(math.sqrt(3 * (5 / 6) / chi2.ppf(0.975, 3)))
    assert got.sigma_w_high == pytest.approx(math.sqrt(3 * (5 / 6) / chi2.ppf(0.025, 3)))
    assert got.sigma_b_low <= got.sigma_b <= got.sigma_b_high


def test_base_means_closer_than_the_seeds_allow_put_sigma_b_at_zero() -> None:
    # every base mean 0.5: MS_B = 0 < MS_W, so σ_B² is estimated negative and clipped
    values = np.array([[0.0, 1.0], [1.0, 0.0], [0.0, 1.0], [1.0, 0.0]])
    got = component_intervals(values, 0.95)
    assert (got.ms_between, got.ms_within) == (0.0, 0.5)
    assert got.sigma_b == got.sigma_b_low == 0.0
    assert got.sigma_b_high >= 0.0


@pytest.mark.parametrize(("sigma_b", "sigma_w"), [(1.0, 1.0), (0.5, 1.0), (1.0, 0.3)])
def test_both_intervals_cover_near_their_level(sigma_b: float, sigma_w: float) -> None:
    rng = np.random.default_rng(7)
    draws, bases, seeds = 3000, 4, 2
    b_in = w_in = 0
    for _ in range(draws):
        y = rng.normal(0, sigma_b, (bases, 1)) + rng.normal(0, sigma_w, (bases, seeds))
        got = component_intervals(y, 0.90)
        b_in += got.sigma_b_low <= sigma_b <= got.sigma_b_high
        w_in += got.sigma_w_low <= sigma_w <= got.sigma_w_high
    assert w_in / draws == pytest.approx(0.90, abs=0.02)  # exact
    assert 0.86 <= b_in / draws <= 0.96  # MLS: near nominal


def test_bad_layouts_are_refused_with_their_shape() -> None:
    with pytest.raises(ValueError, match=r"got shape \(3, 1\)"):
        component_intervals(np.ones((3, 1)), 0.95)
    with pytest.raises(ValueError, match="finite"):
        component_intervals(np.array([[1.0, math.nan], [1.0, 2.0]]), 0.95)
