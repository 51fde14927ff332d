"""Power and design against hand computations: the t-test's power (G*Power's values), the
replicates and seeds a target needs, the detectable difference, the variance components of a
balanced 2×4 layout from its mean squares, seeds per base, and `zgain check`'s
inside-probability (docs/method.md#claims-about-the-procedure)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from zgain.stats.intervals import spread_upper_bound
from zgain.stats.power import (
    detectable_difference,
    inside_probability,
    replicates_needed,
    seeds_for_half_width,
    seeds_per_base,
    t_test_power,
)
from zgain.stats.random_effects import components_of_moments, variance_components

CHI2_05_6 = 1.635383  # χ²_{0.05, 6} (χ² table)
CHI2_05_1 = 0.00393214  # χ²_{0.05, 1} (χ² table)


def power(effect: float, sd: float, n: int, alpha: float) -> float:
    """The one-sample t-test's power at effect/sd with n replicates, two-sided level alpha."""
    return t_test_power(effect * math.sqrt(n) / sd, n, 1.0 - alpha)


def test_power_and_replicates_by_the_textbook() -> None:
    # one-sample t-test, d = 1, two-sided 5%: power 0.803 at n = 10, 0.737 at n = 9 (G*Power)
    assert power(1.0, 1.0, 10, 0.05) == pytest.approx(0.8031, abs=5e-4)
    assert power(1.0, 1.0, 9, 0.05) < 0.8
    # the 80% upper bound on σ from sd 1 on 3 values: √(2 / χ²_{0.2, 2}), χ²_{0.2,2} = −2 ln 0.8
    assert spread_upper_bound(1.0, 3, 0.8) == pytest.approx(math.sqrt(2 / (-2 * math.log(0.8))))
    sd = 1.0 / spread_upper_bound(1.0, 3, 0.8)  # so that the upper bound is exactly 1
    assert replicates_needed(1.0, sd, 3, 0.05) == 10
    assert replicates_needed(0.001, 1.0, 3, 0.05) == math.inf
    assert math.isnan(replicates_needed(1.0, math.nan, 1, 0.05))


def test_power_by_simulation() -> None:
    rng = np.random.default_rng(0)
    draws = rng.normal(0.5, 1.0, size=(40_000, 12))
    t = draws.mean(1) / (draws.std(1, ddof=1) / math.sqrt(12))
    from scipy.stats import t as student_t

    rejected = np.mean(np.abs(t) > student_t.ppf(0.975, 11))
    assert power(0.5, 1.0, 12, 0.05) == pytest.approx(rejected, abs=0.01)


def test_power_is_finite_far_in_the_lower_tail() -> None:
    # nct.cdf(−t_{0.975,4}, 4, 10) is NaN with scipy 1.17: the lower tail, P(T < −t), must come
    # from nct.sf(t, 4, −10) instead. A true mean 10 SE from 0 on 5 replicates: power ≈ 1.
    got = t_test_power(10.0, 5, 0.95)
    assert math.isfinite(got) and got == pytest.approx(0.9999996155, abs=1e-9)
    assert math.isfinite(t_test_power(-10.0, 5, 0.95))
    assert t_test_power(-10.0, 5, 0.95) == pytest.approx(got, rel=1e-12)  # symmetric
    # the same replicates_needed as a power that never fails: 3 seeds at d = 10 suffice
    assert replicates_needed(10.0, 1.0 / spread_upper_bound(1.0, 5, 0.8), 5, 0.05) == 3


def test_detectable_difference_approaches_the_normal_formula() -> None:
    b = 100_000
    se = math.sqrt(1.0**2 + 2.0**2 / 4) / math.sqrt(b)
    normal = (stats.norm.ppf(0.975) + stats.norm.ppf(0.8)) * se
    delta = detectable_difference(1.0, 2.0, b, 4, 0.95)
    assert delta == pytest.approx(normal, rel=1e-3)


def test_detectable_difference_has_the_requested_power() -> None:
    b, k, sigma_b, sigma_w = 5, 3, 0.5, 1.2
    se = math.sqrt(sigma_b**2 + sigma_w**2 / k) / math.sqrt(b)
    delta = detectable_difference(sigma_b, sigma_w, b, k, 0.95, power=0.8)
    critical = stats.t.ppf(0.975, b - 1)
    nc = delta / se
    power = stats.nct.sf(critical, b - 1, nc) + stats.nct.cdf(-critical, b - 1, nc)
    assert power == pytest.approx(0.8, abs=1e-9)
    # And by simulation of the per-base means, N(Δ, σ_B² + σ_W²/k), tested with scipy's t-test.
    rng = np.random.default_rng(0)
    means = rng.normal(delta, se * math.sqrt(b), size=(20_000, b))
    rejected = stats.ttest_1samp(means, 0.0, axis=1).pvalue < 0.05
    assert rejected.mean() == pytest.approx(0.8, abs=0.015)


def test_detectable_difference_shrinks_with_more_bases_and_scales_with_sigma() -> None:
    deltas = [detectable_difference(1.0, 1.0, b, 2, 0.95) for b in range(2, 12)]
    assert all(a > b > 0 for a, b in zip(deltas, deltas[1:], strict=False))
    doubled = detectable_difference(2.0, 2.0, 6, 2, 0.95)
    assert doubled == pytest.approx(2 * detectable_difference(1.0, 1.0, 6, 2, 0.95), rel=1e-9)


def test_detectable_difference_undefined_and_invalid() -> None:
    assert math.isnan(detectable_difference(1.0, 1.0, 1, 2, 0.95))
    assert math.isnan(detectable_difference(math.nan, 1.0, 5, 2, 0.95))
    # one seed per base: σ_W undefined, σ_B the whole spread of the per-base means
    assert detectable_difference(1.0, math.nan, 5, 1, 0.95) == detectable_difference(
        1.0, 0.0, 5, 1, 0.95
    )
    assert detectable_difference(0.0, 0.0, 5, 2, 0.95) == 0.0
    assert detectable_difference(1.0, 1.0, 5, 2, 0.95, power=0.04) == 0.0  # below α = 0.05
    for power in (0.0, 1.0, 1.5):
        with pytest.raises(ValueError):
            detectable_difference(1.0, 1.0, 5, 2, 0.95, power=power)
    for k in (0, -1.0):
        with pytest.raises(ValueError):
            detectable_difference(1.0, 1.0, 5, k, 0.95)


def test_seeds_per_base_by_hand() -> None:
    assert seeds_per_base(4.0, 1.0, 1.0, 2.0) == pytest.approx(4.0)  # √(4·4 / (1·1))
    assert seeds_per_base(1.0, 9.0, 2.0, 3.0) == pytest.approx(0.5)  # √(1·9 / (9·4))
    assert seeds_per_base(1.0, 1.0, 0.0, 1.0) == math.inf


def test_seeds_per_base_minimises_variance_times_cost() -> None:
    c_base, c_seed, sigma_b, sigma_w = 10.0, 1.0, 0.3, 1.5
    k = seeds_per_base(c_base, c_seed, sigma_b, sigma_w)

    def variance_at_unit_budget(k: float) -> float:
        return (sigma_b**2 + sigma_w**2 / k) * (c_base + k * c_seed)

    assert variance_at_unit_budget(k) < variance_at_unit_budget(0.9 * k)
    assert variance_at_unit_budget(k) < variance_at_unit_budget(1.1 * k)


def test_seeds_per_base_rejects_non_positive_costs() -> None:
    for costs in ((0.0, 1.0), (1.0, 0.0), (-1.0, 1.0)):
        with pytest.raises(ValueError):
            seeds_per_base(*costs, 1.0, 1.0)


def test_a_balanced_two_by_four_layout_by_its_mean_squares() -> None:
    # base 0: 1, 2, 3, 4 (mean 2.5, var 5/3); base 1: 5, 6, 7, 10 (mean 7, var 14/3).
    # MS_W = (5/3 + 14/3) / 2 = 19/6 on 6 df; grand mean 4.75, MS_B = 4 · (2.25² + 2.25²) / 1
    # = 40.5 on 1 df; σ_W² = MS_W, σ_B² = (MS_B − MS_W) / k = (40.5 − 19/6) / 4 = 28/3.
    groups = [np.array([1.0, 2.0, 3.0, 4.0]), np.array([5.0, 6.0, 7.0, 10.0])]
    parts = variance_components(groups, 0.95)
    assert parts.sigma_w == pytest.approx(math.sqrt(19 / 6), rel=1e-12)
    assert parts.sigma_b == pytest.approx(math.sqrt(28 / 3), rel=1e-12)
    assert parts.df_w == 6 and parts.separable
    # upper bounds: σ_W ≤ √(19/6) · √(6 / χ²_{0.05,6}); σ_B ≤ sd(2.5, 7) · √(1 / χ²_{0.05,1})
    assert parts.sigma_w_upper == pytest.approx(math.sqrt(19 / 6 * 6 / CHI2_05_6), rel=1e-5)
    assert parts.sigma_b_upper == pytest.approx(math.sqrt(10.125 / CHI2_05_1), rel=1e-5)
    sizes, means = np.array([4.0, 4.0]), np.array([2.5, 7.0])
    same = components_of_moments(sizes, means, np.array([5 / 3, 14 / 3]), 0.95)
    assert same.sigma_b == pytest.approx(parts.sigma_b, rel=1e-12)
    assert same.sigma_w == pytest.approx(parts.sigma_w, rel=1e-12)


def test_variance_components_drop_undefined_values_and_empty_bases() -> None:
    groups = [np.array([1.0, 2.0, 3.0, 4.0, math.nan]), np.array([5.0, 6.0, 7.0, 10.0])]
    assert variance_components(groups + [np.array([math.nan])], 0.95) == variance_components(
        [np.array([1.0, 2.0, 3.0, 4.0]), np.array([5.0, 6.0, 7.0, 10.0])], 0.95
    )
    one_each = variance_components([np.array([1.0]), np.array([2.0]), np.array([4.0])], 0.95)
    assert math.isnan(one_each.sigma_w) and not one_each.separable
    assert one_each.sigma_b == pytest.approx(math.sqrt(7 / 3))  # var(1, 2, 4) = 7/3


def test_seeds_for_a_half_width_by_hand() -> None:
    # sd 0.03, target 0.05: n = 3 gives 4.3027 · 0.03/√3 = 0.0745 > 0.05; n = 4 gives
    # t_{0.975,3} = 3.1824 · 0.03/2 = 0.0477 ≤ 0.05
    assert seeds_for_half_width(0.03, 0.05, 0.95) == 4
    assert seeds_for_half_width(math.nan, 0.05, 0.95) is None
    assert seeds_for_half_width(10.0, 0.001, 0.95) is None  # beyond the cap


def test_power_at_no_effect_is_the_level() -> None:
    assert t_test_power(0.0, 6, 0.95) == pytest.approx(0.05, abs=1e-12)


def test_inside_probability_by_hand() -> None:
    # n = n_f = 3 at 95%: bound x = t_{0.975,2} / √2; with 2 df P(|T| ≤ x) = x / √(2 + x²)
    x = 4.302652729749464 / math.sqrt(2)
    assert inside_probability(3, 3, 0.95) == pytest.approx(x / math.sqrt(2 + x * x), rel=1e-9)
    # a fresh run of many seeds: the committed interval's own coverage, 95%
    assert inside_probability(5, 10**9, 0.95) == pytest.approx(0.95, abs=1e-6)
