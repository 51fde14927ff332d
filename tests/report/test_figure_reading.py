"""The figures read at a glance: one colour per variant in every figure, axes set by the
compared group with outliers as labelled arrows, no interval cut, a title on every figure, and
no caption text for what is not drawn."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import yaml
from matplotlib.colors import to_hex
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Rectangle
from matplotlib.text import Annotation

from tests.conftest import REPO_ROOT
from zgain.figures.draw import (
    decomposition_figure,
    frontier_figure,
    information_by_position_figure,
    learning_figure,
)
from zgain.figures.forest import forest_figures
from zgain.figures.style import KNOWN, styles
from zgain.params import CommonCVAEParams
from zgain.results.analysis.tables import ORACLE
from zgain.sweep.figures import sweep_frontier_figure
from zgain.sweep.tables import Sweep

GROUP = ["token_mean", "token_sum", "mean_tok", "mean_cc"]
VARIANTS = [*GROUP, "token_share"]  # token_share far below the rest
RATES = (0.5, 1.0, 2.0)
METRICS = ("kl", "z_information", "capture", "marginal_gain", "probe_accuracy")


def value(variant: str, rate: float, metric: str, seed: int = 0) -> float:
    if metric == "kl":
        return rate
    if variant == "token_share":
        return -5.0 * rate
    if variant == ORACLE:
        return 0.9
    return 0.3 * rate + 0.01 * VARIANTS.index(variant) + 0.001 * seed


def frontier_inputs(seeds: int = 1) -> tuple[pd.DataFrame, pd.DataFrame]:
    points = pd.DataFrame(
        [
            {"variant": v, "rate": r, "seed": s, **{m: value(v, r, m, s) for m in METRICS}}
            for v in VARIANTS
            for r in RATES
            for s in range(seeds)
        ]
    )
    frontier = (
        points.melt(id_vars=["variant", "rate", "seed"], var_name="metric", value_name="v")
        .groupby(["variant", "rate", "metric"], as_index=False)
        .agg(mean=("v", "mean"), n=("v", "size"))
    )
    return points, frontier


def decomposition_input(seeds: int = 1) -> pd.DataFrame:
    rows = []
    for v in [*VARIANTS, ORACLE]:
        parts = {"marginal_gain": -0.05, "z_information": value(v, 1.0, "z_information")}
        parts["gross_gain"] = sum(parts.values())
        for metric, mean in parts.items():
            low, high = (mean - 0.04, mean + 0.04) if seeds > 1 else (math.nan, math.nan)
            rows.append(
                {"variant": v, "metric": metric, "mean": mean, "low": low, "high": high, "n": seeds}
            )
    return pd.DataFrame(rows)


def positions_input(seeds: int = 1) -> pd.DataFrame:
    rows = []
    for v in [*VARIANTS, ORACLE]:
        for t in range(4):
            mean = -3.0 if v == "token_share" and t == 2 else 0.5 / (t + 1)
            low, high = (mean - 0.05, mean + 0.05) if seeds > 1 else (math.nan, math.nan)
            rows.append(
                {"variant": v, "position": t, "mean": mean, "low": low, "high": high, "n": seeds}
            )
    return pd.DataFrame(rows)


def common() -> CommonCVAEParams:
    params = yaml.safe_load((REPO_ROOT / "params.yaml").read_text())["cvae"]["common"]
    return CommonCVAEParams.model_validate(params).model_copy(
        update={"val_every": 50, "steps": 400, "beta_schedule": "constant"}
    )


def curve_input(seeds: int = 1) -> pd.DataFrame:
    rows = []
    for v in VARIANTS:
        for s in range(seeds):
            for step in range(50, 401, 50):
                final = -4.0 if v == "token_share" else 0.5 + 0.01 * VARIANTS.index(v)
                rows.append(
                    {
                        "step": step,
                        "series": f"{v}/seed{s}",
                        "val_z_information": final * step / 400,
                    }
                )
    return pd.DataFrame(rows)


def every_figure(seeds: int = 1) -> dict[str, Figure]:
    points, frontier = frontier_inputs(seeds)
    look = styles(VARIANTS)
    refs = {"z_information": 0.9, "capture": 1.0}
    sweep_rows = points[points["rate"] == 1.0].assign(experiment="e")
    return {
        "frontier": frontier_figure(points, frontier, VARIANTS, refs, look=look, group=GROUP),
        "decomposition": decomposition_figure(decomposition_input(seeds), VARIANTS, True, look),
        "positions": information_by_position_figure(positions_input(seeds), VARIANTS, look),
        "learning": learning_figure(curve_input(seeds), common(), VARIANTS, 0.9, 1.0),
        "sweep": sweep_frontier_figure(Sweep(("x",), sweep_rows, 0.9)),
    }


def texts(fig: Figure) -> list[str]:
    """Every piece of text the figure draws: titles, labels, legends, annotations."""
    found = [fig.get_suptitle()]
    for ax in fig.axes:
        found += [ax.get_title(), ax.get_xlabel(), ax.get_ylabel()]
        found += [t.get_text() for t in ax.texts]
    for legend in [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend())]:
        found += [t.get_text() for t in legend.get_texts()]
    return [t for t in found if t]


def variant_colours(fig: Figure, name: str) -> set[str]:
    """The colours the figure gives `name`: its legend entries, else its bar (decomposition)."""
    colours = set()
    for legend in fig.legends:
        for text, handle in zip(legend.get_texts(), legend.legend_handles, strict=True):
            if text.get_text().split(" ")[0] == name:
                colour = handle.get_color() if isinstance(handle, Line2D) else None
                colour = colour if colour is not None else handle.get_facecolor()[0]
                colours.add(to_hex(colour))
    if not colours:  # the decomposition's bars: the solid part at the variant's tick
        ax = fig.axes[0]
        ticks = [t.get_text() for t in ax.get_xticklabels()]
        x = ticks.index(name)
        for bar in (p for p in ax.patches if isinstance(p, Rectangle)):
            if abs(bar.get_x() + bar.get_width() / 2 - x) < 1e-9 and not bar.get_hatch():
                colours.add(to_hex(bar.get_facecolor(), keep_alpha=False))
    return colours


@pytest.mark.parametrize("name", VARIANTS)
def test_a_variant_has_one_colour_in_every_figure(name: str) -> None:
    figures = every_figure()
    seen = {kind: variant_colours(fig, name) for kind, fig in figures.items()}
    assert all(len(colours) == 1 for colours in seen.values()), seen
    assert {c for colours in seen.values() for c in colours} == {KNOWN[name][0]}


def test_every_figure_has_a_title() -> None:
    figures = every_figure()
    points, frontier = frontier_inputs()
    figures |= forest_figures(verdicts_input(), "capture", procedure_input(), DELTAS)
    for kind, fig in figures.items():
        titles = [fig.get_suptitle(), *(ax.get_title() for ax in fig.axes)]
        assert any(t.strip() for t in titles), kind


@pytest.mark.parametrize("kind", ["frontier", "decomposition", "positions", "learning", "sweep"])
def test_an_outlier_is_an_arrow_and_does_not_set_the_axis(kind: str) -> None:
    fig = every_figure()[kind]
    ax = fig.axes[0]
    low, high = ax.get_ylim()
    assert low > -2.0  # token_share lies at -3 or below, the rest within [-0.1, 1]
    arrows = [a for a in ax.texts if isinstance(a, Annotation) and a.arrow_patch is not None]
    assert arrows, "no arrow at the edge"
    assert all(a.xy[1] in (low, high) for a in arrows)
    if kind != "decomposition":  # its bars are named on the x axis
        assert any(a.get_text().startswith("token_share ") for a in arrows)


def test_the_compared_group_always_sets_the_axis() -> None:
    fig = every_figure()["frontier"]
    low, high = fig.axes[0].get_ylim()
    group = [value(v, r, "z_information") for v in GROUP for r in RATES]
    assert low <= min(group) and max(group) <= high


@pytest.mark.parametrize("kind", ["decomposition", "positions"])
def test_every_drawn_interval_lies_inside_the_axis(kind: str) -> None:
    fig = every_figure(seeds=3)[kind]
    table = decomposition_input(3) if kind == "decomposition" else positions_input(3)
    table = table[(table["variant"] != "token_share") & table["low"].notna()]
    drawn = {"decomposition": ["gross_gain", "marginal_gain"]}.get(kind, [None])
    for ax, metric in zip(fig.axes, drawn, strict=True):
        rows = table if metric is None else table[table["metric"] == metric]
        low, high = ax.get_ylim()
        shown = rows[(rows["mean"] >= low) & (rows["mean"] <= high)]  # the rest are arrows
        assert len(shown) >= len(rows) - 4
        assert low <= shown["low"].min() and shown["high"].max() <= high


def test_one_seed_says_so_and_names_no_interval_or_band() -> None:
    for kind, fig in every_figure(seeds=1).items():
        words = " ".join(texts(fig))
        assert "over seeds" not in words and "band" not in words, kind
        assert "(interval)" not in words and "with its interval" not in words, kind
        if kind != "sweep":
            assert "one seed" in words, kind


def test_several_seeds_are_counted() -> None:
    for kind, fig in every_figure(seeds=3).items():
        if kind != "sweep":
            assert "mean over 3 seeds" in " ".join(texts(fig)), kind


def test_an_identical_variant_stays_visible_over_its_twin() -> None:
    """Drawn open around the one it equals, in short dashes, its legend entry naming it."""
    variants = ["token_mean", "dist_normalized", "mean_tok"]
    points, frontier = frontier_inputs()
    points = points[points["variant"] == "token_mean"]
    points = pd.concat([points, points.assign(variant="dist_normalized")])
    frontier = frontier[frontier["variant"] == "token_mean"]
    frontier = pd.concat([frontier, frontier.assign(variant="dist_normalized")])
    look = styles(variants, same_as={"dist_normalized": "token_mean"})
    fig = frontier_figure(points, frontier, variants[:2], {}, look=look, group=variants[:2])
    lines = {to_hex(ln.get_color()): ln for ln in fig.axes[0].get_lines() if ln.get_marker()}
    under, over = lines[KNOWN["token_mean"][0]], lines[KNOWN["dist_normalized"][0]]
    assert over.get_markerfacecolor() == "none" and over.get_zorder() > under.get_zorder()
    assert over.get_markersize() > under.get_markersize()
    assert over.get_linestyle() not in ("-", "None")
    (legend,) = fig.legends
    assert "dist_normalized (identical to token_mean)" in [t.get_text() for t in legend.texts]


DELTAS = {"capture": 0.05, "z_information": 0.05, "marginal_gain": 0.02}


def verdicts_input(seeds: int = 1) -> pd.DataFrame:
    rows = []
    for rate in RATES:
        for a in VARIANTS[1:]:
            diff = -2.0 * rate if a == "token_share" else 0.01 * VARIANTS.index(a)
            low, high = (diff - 0.03, diff + 0.03) if seeds > 1 else (math.nan, math.nan)
            verdict = "undetermined" if seeds == 1 else "equivalent"
            rows.append(
                {
                    "rate": rate, "metric": "capture", "a": a, "b": "token_mean",
                    "mean_diff": diff, "low": low, "high": high, "n": seeds, "delta": 0.05,
                    "verdict": verdict,
                }
            )  # fmt: skip
    return pd.DataFrame(rows)


def procedure_input() -> pd.DataFrame:
    """The committed default's claims over bases: mean_tok's G^marg interval reaches -0.143."""
    return pd.DataFrame(
        [
            ("token_sum", "capture", -0.026, -0.147, 0.094, "undetermined"),
            ("mean_tok", "capture", -0.010, -0.101, 0.081, "undetermined"),
            ("token_sum", "marginal_gain", 0.017, -0.019, 0.053, "undetermined"),
            ("mean_cc", "marginal_gain", -0.071, -0.100, -0.042, "worse"),
            ("mean_tok", "marginal_gain", -0.093, -0.143, -0.043, "worse"),
        ],
        columns=["a", "metric", "mean", "low", "high", "verdict"],
    ).assign(b="token_mean", rate=1.0, n=4)


def test_the_bases_forest_cuts_no_interval() -> None:
    fig = forest_figures(verdicts_input(), "capture", procedure_input(), DELTAS)["forest_bases.png"]
    procedure = procedure_input()
    for ax, metric in zip(fig.axes, ["capture", "marginal_gain"], strict=True):
        rows = procedure[procedure["metric"] == metric]
        low, high = ax.get_xlim()
        assert low < rows["low"].min() and rows["high"].max() < high
        assert low <= -DELTAS[metric] and DELTAS[metric] <= high
        assert not [t for t in ax.texts if isinstance(t, Annotation)]  # nothing past the edge


def test_the_forest_shares_one_axis_and_marks_a_far_difference_with_its_value() -> None:
    fig = forest_figures(verdicts_input(3), "capture", None, DELTAS)["forest.png"]
    limits = {ax.get_xlim() for ax in fig.axes}
    assert len(limits) == 1
    ((low, high),) = limits
    assert low > -1.0  # token_share's -1 to -4 do not set it
    for ax, rate in zip(fig.axes, RATES, strict=True):
        (arrow,) = [t for t in ax.texts if isinstance(t, Annotation)]
        assert arrow.xy[0] == low and arrow.get_text().startswith(f"{-2.0 * rate:+.2f} [")
    others = verdicts_input(3)
    others = others[others["a"] != "token_share"]
    assert low < others["low"].min() and others["high"].max() < high


def test_the_forest_legend_names_only_the_verdicts_drawn() -> None:
    fig = forest_figures(verdicts_input(1), "capture", None, DELTAS)["forest.png"]
    (legend,) = fig.legends
    entries = [t.get_text() for t in legend.get_texts()]
    assert "undetermined (no interval)" in entries
    assert not {"better", "worse", "equivalent"} & set(entries)
    assert "one seed: no interval" in fig.get_suptitle()


def test_colours_follow_names_not_positions() -> None:
    figures = [
        frontier_figure(*frontier_inputs(), order, {}, look=styles(order))
        for order in (VARIANTS, VARIANTS[::-1])
    ]
    first, second = (
        {v: variant_colours(fig, v) for v in VARIANTS} for fig in figures
    )  # fmt: skip
    assert first == second
    assert np.unique([next(iter(c)) for c in first.values()]).size == len(VARIANTS)


def test_one_target_rate_is_not_titled_a_frontier() -> None:
    """With several rates the figure is the frontier; with one it says so and names the rate."""
    points, frontier = frontier_inputs()
    assert (
        frontier_figure(points, frontier, VARIANTS, {})
        .get_suptitle()
        .startswith("The frontier: every variant at each target rate")
    )
    one = float(sorted(frontier["rate"].unique())[-1])
    title = frontier_figure(
        points[points["rate"] == one], frontier[frontier["rate"] == one], VARIANTS, {}
    ).get_suptitle()
    assert title.startswith(f"Every variant at its one target rate, C = {one:g}: no frontier")
