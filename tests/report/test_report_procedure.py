"""Intervals over bases, variance components and the design's power against hand computations."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from scipy import stats

from zgain.report.render.markdown import NOT_SEPARABLE, sigma_cell, sigma_cells
from zgain.report.sections.findings import sigma_legend
from zgain.results.analysis.procedure import (
    procedure_interval,
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


def test_the_sigma_legend_says_what_its_cells_hold() -> None:
    one_seed = f"| a − b | 0.75 | +0.01 | {NOT_SEPARABLE} |"
    two_seeds = "| a − b | 0.75 | +0.01 | 0.010 (≤ 0.052), 0.021 (≤ 0.050) |"
    assert sigma_legend(one_seed, 0.95).endswith(f"({NOT_SEPARABLE}: one seed per base)")
    legend = sigma_legend(two_seeds, 0.95)
    assert NOT_SEPARABLE not in legend and "one-sided 95% upper bound" in legend
