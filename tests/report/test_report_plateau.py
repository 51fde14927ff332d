"""The plateau check: validation I^θ over the last quarter of training, at the validated steps."""

from __future__ import annotations

import math

import pandas as pd
import pytest
import yaml
from conftest import REPO_ROOT

from zgain.core.errors import DataError
from zgain.figures.draw import learning_figure
from zgain.report.sections.plateau import plateau_sentence
from zgain.results.analysis.plateau import (
    QUANTITY,
    TOP,
    plateau_table,
    validated,
)

STEPS, VAL_EVERY, LOG_EVERY = 400, 50, 25


def curve(values: dict[str, list[float]]) -> pd.DataFrame:
    """A dvclive-shaped curve logged every LOG_EVERY steps: at a log step between validations
    the latest validated value repeats, as the fit loop logs it; values[series] holds one value
    per validated step (50, 100, …, 400)."""
    rows = []
    for series, by_validation in values.items():
        for step in range(LOG_EVERY, STEPS + 1, LOG_EVERY):
            latest = by_validation[step // VAL_EVERY - 1] if step >= VAL_EVERY else math.nan
            rows.append((step, series, latest))
    return pd.DataFrame(rows, columns=["step", "series", QUANTITY])


def ramp(end: float, last_quarter_change: float) -> list[float]:
    """Eight validations rising linearly to `end - last_quarter_change` at step 300, then to
    `end` at 400."""
    at_300 = end - last_quarter_change
    first = [at_300 * k / 6 for k in range(1, 7)]
    return [*first, at_300 + last_quarter_change / 2, end]


def test_only_validated_steps_are_read() -> None:
    points = validated(curve({"a/seed0": ramp(0.6, 0.1)}), VAL_EVERY, STEPS)
    assert points["step"].tolist() == list(range(50, 401, 50))
    assert points["variant"].unique().tolist() == ["a"] and points["seed"].unique().tolist() == [0]


def test_the_last_quarter_change_is_computed_per_variant_and_for_the_top_group() -> None:
    values = {
        "a/seed0": ramp(0.60, 0.04),
        "a/seed1": ramp(0.70, 0.02),  # a: mean change 0.03
        "b/seed0": ramp(0.50, 0.00),
        "b/seed1": ramp(0.52, 0.00),  # b: flat
        "c/seed0": ramp(0.10, 0.20),
        "c/seed1": ramp(0.10, 0.20),  # c: outside the top group
    }
    table = plateau_table(
        curve(values), VAL_EVERY, STEPS, ["a", "b", "c"], ["a", "b"], 0.8, confidence=0.95
    )
    table = table.set_index("variant")
    assert table.loc["a", "step_from"] == 300 and table.loc["a", "step_to"] == 400
    assert table.loc["a", "change"] == pytest.approx(0.03)
    assert table.loc["a", "z_information_to"] == pytest.approx(0.65)
    assert table.loc["b", "change"] == pytest.approx(0.0, abs=1e-12)
    assert table.loc[TOP, "change"] == pytest.approx(0.015)  # (0.03 + 0) / 2, c left out
    assert table.loc[TOP, "capture_change"] == pytest.approx(0.015 / 0.8)
    assert table.loc[TOP, "members"] == "a, b"
    assert not table.loc[TOP, "plateau"] and table.loc["b", "plateau"]
    # the top group's capture change per seed: (0.05 + 0) / 2 and (0.025 + 0) / 2; its interval
    # is mean ± t_{0.975, 1} · sd / √2, sd = 0.0125 / √2, t_{0.975, 1} = 12.7062
    half = 12.706204736 * (0.0125 / math.sqrt(2)) / math.sqrt(2)
    assert table.loc[TOP, "n"] == 2 and table.loc["a", "n"] == 2
    assert table.loc[TOP, "capture_low"] == pytest.approx(0.01875 - half)
    assert table.loc[TOP, "capture_high"] == pytest.approx(0.01875 + half)
    assert table.loc["b", "capture_low"] == table.loc["b", "capture_high"] == pytest.approx(0.0)
    line = plateau_sentence(table.reset_index(), 1.0)
    assert "+0.015 nats (capture +0.019 [-0.061, +0.098]) over steps 300–400" in line
    assert "no plateau (> ±0.01)" in line


def test_coarse_validation_reads_the_last_validation_before_the_quarter() -> None:
    """val_every = 200: the comparison starts at step 200, and the table says so."""
    rows = [(s, "a/seed0", 0.1 * s / 400) for s in range(25, 401, 25)]
    table = plateau_table(
        pd.DataFrame(rows, columns=["step", "series", QUANTITY]), 200, STEPS, ["a"], ["a"], 1.0,
        confidence=0.95,
    )  # fmt: skip
    assert table["step_from"].tolist() == [200, 200]
    assert table.set_index("variant").loc[TOP, "change"] == pytest.approx(0.05)


def test_without_an_oracle_the_change_stays_in_nats() -> None:
    values = {"a/seed0": ramp(0.6, 0.001)}
    table = plateau_table(curve(values), VAL_EVERY, STEPS, ["a"], ["a"], math.nan, confidence=0.95)
    assert table["capture_change"].isna().all() and not table["plateau"].any()
    assert table["capture_low"].isna().all()  # one seed: no interval either
    assert "no oracle to scale it" in plateau_sentence(table, 1.0)


def test_a_curve_that_stops_early_is_refused() -> None:
    early = curve({"a/seed0": ramp(0.6, 0.1)})
    early = early[early["step"] < STEPS]
    with pytest.raises(DataError, match="no value at the last step 400"):
        plateau_table(early, VAL_EVERY, STEPS, ["a"], ["a"], 1.0, confidence=0.95)


def test_the_figure_draws_one_line_per_variant_and_the_oracle() -> None:
    values = {"a/seed0": ramp(0.6, 0.1), "b/seed0": ramp(0.5, 0.0)}
    from zgain.params import CommonCVAEParams

    common = CommonCVAEParams.model_validate(
        yaml.safe_load((REPO_ROOT / "params.yaml").read_text())["cvae"]["common"]
    ).model_copy(update={"val_every": VAL_EVERY, "steps": STEPS, "beta_schedule": "constant"})
    fig = learning_figure(curve(values), common, ["a", "b"], 0.8, 1.0)
    (ax,) = fig.axes
    labels = [line.get_label() for line in ax.get_lines()]
    assert labels == ["a", "b", "oracle I*"]
    assert ax.get_lines()[0].get_ydata().tolist()[-1] == pytest.approx(0.6)


def test_the_rule_reads_a_window_one_mechanism_holds_the_rate_over() -> None:
    """The last quarter when the exact penalty started a quarter before it or earlier (it holds
    the rate over the window and its switch-on lies outside), or when there is none; the quarter
    that ends where it starts when it starts later (the multiplier alone holds the rate there).
    Either way the penalty's switch-on can neither make nor break a plateau."""
    from zgain.params import CommonCVAEParams
    from zgain.results.analysis.plateau import plateau_window

    common = CommonCVAEParams.model_validate(
        yaml.safe_load((REPO_ROOT / "params.yaml").read_text())["cvae"]["common"]
    )
    assert common.rate_target.penalty > 0

    def starting(share: float) -> CommonCVAEParams:
        target = common.rate_target.model_copy(update={"penalty_from": share})
        return common.model_copy(update={"rate_target": target})

    assert plateau_window(starting(0.0)) == (0.75, 1.0)
    assert plateau_window(starting(0.25)) == (0.75, 1.0)
    assert plateau_window(starting(0.5)) == (0.75, 1.0)
    assert plateau_window(starting(0.6)) == pytest.approx((0.35, 0.6))
    assert plateau_window(starting(0.75)) == (0.5, 0.75)
    assert plateau_window(starting(1.0)) == (0.75, 1.0)  # a penalty that never starts
    free = common.rate_target.model_copy(update={"penalty": 0.0, "penalty_from": 0.75})
    assert plateau_window(common.model_copy(update={"rate_target": free})) == (0.75, 1.0)
    fixed = starting(0.75).model_copy(update={"beta_schedule": "constant"})
    assert plateau_window(fixed) == (0.75, 1.0)
    # a curve flat before the penalty and rising under it is a plateau by this rule
    values = {"a/seed0": [0.1, 0.2, 0.3, 0.5, 0.5, 0.5, 0.6, 0.7]}
    table = plateau_table(
        curve(values), VAL_EVERY, STEPS, ["a"], ["a"], 1.0, (0.5, 0.75), confidence=0.95
    )
    table["steps"] = STEPS
    top = table.set_index("variant").loc[TOP]
    assert (top["step_from"], top["step_to"]) == (200, 300)
    assert top["change"] == pytest.approx(0.0) and top["plateau"]
    line = plateau_sentence(table, 1.0)
    assert "over steps 200–300 (the quarter before the rate's exact penalty, to step 400)" in line


def test_the_confirming_figure_says_its_lines_are_means_over_replicates() -> None:
    """The confirming tier's curves are means over bases, not seeds: the axis and title say so."""
    from zgain.params import CommonCVAEParams

    common = CommonCVAEParams.model_validate(
        yaml.safe_load((REPO_ROOT / "params.yaml").read_text())["cvae"]["common"]
    ).model_copy(update={"val_every": VAL_EVERY, "steps": STEPS})
    values = {"a/seed0": ramp(0.6, 0.1)}
    fig = learning_figure(
        curve(values), common, ["a"], 0.8, 1.0, over="replicates", tier="Confirming tier: "
    )
    (ax,) = fig.axes
    assert ax.get_ylabel().endswith("one replicate)")  # one curve: no mean claimed
    assert ax.get_title().startswith("Confirming tier: Learning curves at C = 1")
    assert "(shaded: the last quarter)" in ax.get_title()
