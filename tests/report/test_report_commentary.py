"""The generated commentary against hand-built tables (docs/method.md#uncertainty-over-seeds).

The cells hold report_fakes' seed values with their 95% t-intervals (t_{0.975,2} = 4.3027):
z_information token_mean 1, 2, 3 -> 2 [-0.4841, 4.4841], example_inverse 5, 6.5, 7 ->
6.1667 [3.5811, 8.7522]; marginal_gain token_mean 0.1, 0.2, 0.3 -> 0.2 [-0.0484, 0.4484],
example_inverse 0, 0.12, 0.2 -> 0.1067 [-0.1434, 0.3567], token_sum −0.11, −0.1, −0.09 ->
−0.1 [−0.1248, −0.0752].
"""

from __future__ import annotations

import math

import pandas as pd
import pytest
from report_fakes import ORACLE_INFO, WEIGHTS

from zgain.report.render.markdown import fmt, fmt_stats
from zgain.report.sections.checks import damage_sentences
from zgain.results.analysis.damage import damage_table, likelihood_variants, variant_rows
from zgain.results.analysis.tables import DEFINITION, SPLIT
from zgain.results.analysis.tables import SEEDS as OVER_SEEDS
from zgain.results.registry import CELLS

NAN = math.nan
Z_LABEL = "z-information I^θ"
GAIN_LABEL = "marginal gain G^marg"


def cell(variant, metric, mean, low=NAN, high=NAN, n=3, kind=OVER_SEEDS) -> dict:
    return {"variant": variant, "metric": metric, "mean": mean, "low": low, "high": high,
            "n": n, "kind": kind, "source": metric}  # fmt: skip


def table(*cells: dict) -> pd.DataFrame:
    return pd.DataFrame(list(cells), columns=list(CELLS))


def decomposition(sum_marginal: dict | None = None) -> pd.DataFrame:
    """The headline decomposition: base and oracle reference rows around the three variants."""
    token_sum = sum_marginal or {"mean": -0.1, "low": -0.12484, "high": -0.07516}
    return table(
        cell("base", "z_information", 0.0, n=0, kind=DEFINITION),
        cell("base", "marginal_gain", 0.0, n=0, kind=DEFINITION),
        cell("token_mean", "z_information", 2.0, -0.48414, 4.48414),
        cell("token_mean", "marginal_gain", 0.2, -0.04841, 0.44841),
        cell("token_sum", "z_information", 0.6, 0.35159, 0.84841),
        cell("token_sum", "marginal_gain", **token_sum),
        cell("example_inverse", "z_information", 6.16667, 3.58109, 8.75224),
        cell("example_inverse", "marginal_gain", 0.10667, -0.14340, 0.35673),
        cell("oracle", "z_information", ORACLE_INFO, kind=SPLIT),
        cell("oracle", "marginal_gain", 8.0, kind=SPLIT),
    )


def test_fmt_rounds_to_the_given_decimals() -> None:
    assert fmt(2 / 3) == "0.667"
    assert fmt(2.0, 0) == "2"
    assert fmt(1234.5678, 1) == "1234.6"
    assert fmt(3) == "3.000"
    assert fmt(-0.25, 2) == "-0.25"


def test_fmt_signed_always_shows_the_sign() -> None:
    assert fmt(0.5, signed=True) == "+0.500"
    assert fmt(0.0, signed=True) == "+0.000"
    assert fmt(-0.25, 2, signed=True) == "-0.25"


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
@pytest.mark.parametrize("signed", [False, True])
def test_fmt_of_an_undefined_value_is_na(value: float, signed: bool) -> None:
    assert fmt(value, signed=signed) == "n/a"
    assert fmt(value, 0, signed=signed) == "n/a"


def test_fmt_stats_shows_the_interval_when_there_is_one() -> None:
    row = {"mean": 2.0, "low": -0.48414, "high": 4.48414}
    assert fmt_stats(row) == "2.000 [-0.484, 4.484]"
    assert fmt_stats(row, signed=True) == "+2.000 [-0.484, +4.484]"
    series = decomposition().iloc[6]  # a table row, with n, kind and source too
    assert fmt_stats(series) == "6.167 [3.581, 8.752]"


def test_fmt_stats_without_an_interval_is_the_mean_alone() -> None:
    assert fmt_stats({"mean": 0.7, "low": NAN, "high": NAN}) == "0.700"
    assert fmt_stats({"mean": 0.7, "low": 0.1, "high": NAN}) == "0.700"  # half an interval
    assert fmt_stats({"mean": -0.05, "low": NAN, "high": NAN}, signed=True) == "-0.050"
    assert fmt_stats({"mean": NAN, "low": NAN, "high": NAN}) == "n/a"


def test_variant_rows_keeps_defined_variant_cells_of_the_metric_best_first() -> None:
    rows = variant_rows(decomposition(), "z_information")
    # base and oracle are reference rows, not variants: the oracle's 10 must not lead
    assert rows["variant"].tolist() == ["example_inverse", "token_mean", "token_sum"]
    assert set(rows["metric"]) == {"z_information"}


def test_variant_rows_drops_undefined_means_and_keeps_ties_in_table_order() -> None:
    cells = table(
        cell("a", "capture", 0.3), cell("b", "capture", NAN), cell("c", "capture", 0.5),
        cell("d", "capture", 0.3), cell("e", "kl", 9.0),
    )  # fmt: skip
    assert variant_rows(cells, "capture")["variant"].tolist() == ["c", "a", "d"]
    assert variant_rows(cells, "gross_gain").empty


def test_likelihood_variants_are_those_weighting_only_sum() -> None:
    assert likelihood_variants(WEIGHTS) == ["token_sum"]
    weights = {
        "d": {"sum": 2.0},
        "a": {"sum": 1.0, "mean": 0.0},  # a zero weight does not use the term
        "b": {"sum": 0.5, "tok": 0.5},
        "c": {"sum": 0.0, "mean": 1.0},
    }
    assert likelihood_variants(weights) == ["d", "a"]
    assert likelihood_variants({}) == []


def test_a_likelihood_objective_below_the_threshold_is_flagged_damaged() -> None:
    (line,) = damage_sentences(damage_table(decomposition(), WEIGHTS))
    assert line.startswith(
        "**damaged**: token_sum is a likelihood objective (weights only `sum`) yet its "
        "`marginal_gain` is -0.100 [-0.125, -0.075] nats/seq, below -0.05: fine-tuning cost "
        "likelihood. It started at the base (G^marg = 0)"
    )
    assert line.endswith("may only win back what fine-tuning lost from M.")
    assert len(line) < 600
    assert "token_mean" not in line and "example_inverse" not in line


@pytest.mark.parametrize(
    ("cells", "shown"),
    [
        ({"mean": -0.05, "low": NAN, "high": NAN, "n": 1}, "-0.050"),  # on the threshold
        ({"mean": 0.02, "low": -0.01, "high": 0.05}, "0.020 [-0.010, 0.050]"),
    ],
)
def test_a_likelihood_objective_at_or_above_the_threshold_is_not_damaged(
    cells: dict, shown: str
) -> None:
    assert damage_sentences(damage_table(decomposition(cells), WEIGHTS)) == [
        f"token_sum is a likelihood objective and keeps `marginal_gain` = {shown} nats/seq "
        "≥ -0.05: not damaged."
    ]


def test_an_undefined_marginal_gain_cannot_be_checked() -> None:
    undefined = decomposition({"mean": NAN, "low": NAN, "high": NAN, "n": 0})
    missing = decomposition()
    missing = missing[
        ~((missing["variant"] == "token_sum") & (missing["metric"] == "marginal_gain"))
    ]
    for cells in (undefined, missing):
        assert damage_sentences(damage_table(cells, WEIGHTS)) == [
            "token_sum: `marginal_gain` is undefined, the damage check cannot run."
        ]


def test_every_likelihood_objective_gets_one_line_in_weights_order() -> None:
    weights = {"token_mean": {"mean": 1.0}, "token_sum": {"sum": 1.0}, "sum_b": {"sum": 3.0},
               "sum_c": {"sum": 1.0, "ex": 0.0}}  # fmt: skip
    cells = pd.concat([decomposition(), table(cell("sum_c", "marginal_gain", 0.5, n=1))])
    lines = damage_sentences(damage_table(cells, weights))
    assert len(lines) == 3
    assert lines[0].startswith("**damaged**: token_sum ")
    assert lines[1] == "sum_b: `marginal_gain` is undefined, the damage check cannot run."
    assert lines[2] == (
        "sum_c is a likelihood objective and keeps `marginal_gain` = 0.500 nats/seq ≥ -0.05: "
        "not damaged."
    )


def test_without_a_likelihood_objective_no_damage_check_applies() -> None:
    weights = {v: w for v, w in WEIGHTS.items() if v != "token_sum"}
    assert damage_sentences(damage_table(decomposition(), weights)) == [
        "No variant is a likelihood objective (weights only `sum`), so no damage check applies."
    ]
