"""Intervals over bases, variance components and the design's power against hand computations."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from zgain.report.markdown import NOT_SEPARABLE, sigma_cell, sigma_cells
from zgain.report.procedure import (
    detectable_difference,
    procedure_interval,
    seeds_per_base,
    variance_components,
)


def table(groups: dict[int, list[float]]) -> pd.DataFrame:
    """One row per replicate: base -> that base's values, seeds numbered from 0."""
    rows = [
        {"base": base, "seed": seed, "value": value}
        for base, values in groups.items()
        for seed, value in enumerate(values)
    ]
    return pd.DataFrame(rows, columns=["base", "seed", "value"])


# 3 bases × 2 seeds. Base means 2, 5, 8; within-base variances (ddof 1) 2, 2, 8.
# σ_W² = (1·2 + 1·2 + 1·8) / 3 = 4; var(2, 5, 8) = (9 + 0 + 9) / 2 = 9;
# σ_B² = 9 − 4/2 = 7.
BALANCED = {0: [1.0, 3.0], 1: [4.0, 6.0], 2: [6.0, 10.0]}


def test_balanced_components_by_hand() -> None:
    components = variance_components(table(BALANCED), 0.95)
    assert components.sigma_w == pytest.approx(2.0)
    assert components.sigma_b == pytest.approx(math.sqrt(7.0))
    assert components.df_w == 3


def test_unbalanced_components_by_hand() -> None:
    # Base 0: 0, 2, 4 (k 3, mean 2, var 4); base 1: 5, 7 (k 2, mean 6, var 2); base 2: 10 (k 1).
    # σ_W² = (2·4 + 1·2) / 3 = 10/3 on 3 df; var(2, 6, 10) = (16 + 0 + 16) / 2 = 16;
    # σ_B² = 16 − (10/3)(1/3 + 1/2 + 1)/3 = 16 − 55/27 = 377/27.
    components = variance_components(table({0: [0.0, 2.0, 4.0], 1: [5.0, 7.0], 2: [10.0]}), 0.95)
    assert components.sigma_w == pytest.approx(math.sqrt(10.0 / 3.0))
    assert components.sigma_b == pytest.approx(math.sqrt(377.0 / 27.0))
    assert components.df_w == 3


def test_between_base_variance_clips_at_zero() -> None:
    # Means 5 and 6 (var 0.5) but σ_W² = 50 predicts 50/2 = 25 from the seeds alone.
    components = variance_components(table({0: [0.0, 10.0], 1: [1.0, 11.0]}), 0.95)
    assert components.sigma_b == 0.0
    assert components.sigma_w == pytest.approx(math.sqrt(50.0))


def test_one_replicate_per_base_has_no_within_variance() -> None:
    # sd(1, 2, 4): mean 7/3, squared deviations 16/9 + 1/9 + 25/9 = 42/9, / 2 = 7/3.
    components = variance_components(table({0: [1.0], 1: [2.0], 2: [4.0]}), 0.95)
    assert math.isnan(components.sigma_w)
    assert components.df_w == 0
    assert components.sigma_b == pytest.approx(math.sqrt(7.0 / 3.0))


def test_nan_values_are_dropped() -> None:
    with_nan = {0: [1.0, math.nan, 3.0], 1: [4.0, 6.0], 2: [6.0, 10.0, math.nan], 3: [math.nan]}
    assert variance_components(table(with_nan), 0.95) == variance_components(table(BALANCED), 0.95)


CHI2_05_2 = -2.0 * math.log(0.95)  # χ²_{0.05, 2}: with 2 df, P(χ² ≤ x) = 1 − e^{−x/2}
CHI2_05_3 = 0.351846318  # χ²_{0.05, 3} (χ² table)
CHI2_05_1 = 0.00393214  # χ²_{0.05, 1} (χ² table)


def test_upper_bounds_by_hand() -> None:
    # BALANCED: σ_W² = 4 on 3 df -> σ_W ≤ 2 · √(3 / χ²_{0.05,3}) = 5.8400; the per-base means
    # 2, 5, 8 have sd 3 on 2 df -> σ_B ≤ 3 · √(2 / χ²_{0.05,2}) = 13.2462.
    components = variance_components(table(BALANCED), 0.95)
    assert components.sigma_w_upper == pytest.approx(2.0 * math.sqrt(3 / CHI2_05_3), rel=1e-8)
    assert components.sigma_w_upper == pytest.approx(5.8400, abs=1e-4)
    assert components.sigma_b_upper == pytest.approx(3.0 * math.sqrt(2 / CHI2_05_2), rel=1e-12)
    assert components.sigma_b_upper == pytest.approx(13.2462, abs=1e-4)
    assert components.sigma_b <= components.sigma_b_upper and components.separable


def test_a_clipped_between_base_sigma_keeps_its_bound() -> None:
    # Means 5 and 6 (sd √0.5 on 1 df): σ_B clips to 0 but is only known to be ≤
    # √0.5 · √(1 / χ²_{0.05,1}) = 11.276; σ_W² = 50 on 2 df: ≤ √50 · √(2 / χ²_{0.05,2}) = 31.222.
    components = variance_components(table({0: [0.0, 10.0], 1: [1.0, 11.0]}), 0.95)
    assert components.sigma_b == 0.0
    assert components.sigma_b_upper == pytest.approx(math.sqrt(0.5 / CHI2_05_1), rel=1e-6)
    assert components.sigma_w_upper == pytest.approx(math.sqrt(100 / CHI2_05_2), rel=1e-12)
    assert sigma_cell(components.sigma_b, components.sigma_b_upper) == "0 (≤ 11.276)"
    assert sigma_cell(components.sigma_w, components.sigma_w_upper) == "7.071 (≤ 31.222)"


def test_one_seed_per_base_cannot_separate_the_components() -> None:
    components = variance_components(table({0: [1.0], 1: [2.0], 2: [4.0]}), 0.95)
    assert not components.separable and math.isnan(components.sigma_w_upper)
    row = {
        "sigma_b": components.sigma_b,
        "sigma_b_upper": components.sigma_b_upper,
        "sigma_w": components.sigma_w,
        "sigma_w_upper": components.sigma_w_upper,
    }
    assert sigma_cells(row) == (NOT_SEPARABLE, NOT_SEPARABLE)


def test_one_base_has_no_between_variance() -> None:
    components = variance_components(table({0: [1.0, 3.0]}), 0.95)
    assert math.isnan(components.sigma_b)
    assert components.sigma_w == pytest.approx(math.sqrt(2.0))


def test_procedure_interval_is_over_per_base_means() -> None:
    result = procedure_interval(table({**BALANCED, 3: [math.nan, math.nan]}), 0.95)
    assert result.per_base == pytest.approx({0: 2.0, 1: 5.0, 2: 8.0})
    assert set(result.per_base) == {0, 1, 2}  # the all-NaN base is dropped
    assert result.n_replicates == 6
    # sd(2, 5, 8) = 3, so SE = 3/√3 on 3 − 1 = 2 df.
    low, high = stats.t.interval(0.95, df=2, loc=5.0, scale=3.0 / math.sqrt(3.0))
    assert result.interval.mean == pytest.approx(5.0)
    assert (result.interval.low, result.interval.high) == pytest.approx((low, high), rel=1e-9)
    assert result.interval.n == 3
    assert result.components == variance_components(table(BALANCED), 0.95)


def test_procedure_mean_weights_bases_equally() -> None:
    # Per-base means 2, 6, 10 -> 6; the mean of the six replicates would be 28/6.
    result = procedure_interval(table({0: [0.0, 2.0, 4.0], 1: [5.0, 7.0], 2: [10.0]}), 0.9)
    assert result.interval.mean == pytest.approx(6.0)
    low, high = stats.t.interval(0.9, df=2, loc=6.0, scale=4.0 / math.sqrt(3.0))  # sd 4
    assert (result.interval.low, result.interval.high) == pytest.approx((low, high), rel=1e-9)


def test_one_base_gives_no_interval() -> None:
    result = procedure_interval(table({7: [1.0, 2.0, math.nan]}), 0.95)
    assert not result.interval.has_interval
    assert result.interval.mean == pytest.approx(1.5) and result.interval.n == 1
    assert result.per_base == {7: pytest.approx(1.5)}
    assert result.n_replicates == 2


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
