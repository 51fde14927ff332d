"""Every series a figure draws is told apart by colour and marker (line style on top), and its
legend sits off the data, however many variants a study adds."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from matplotlib.collections import PathCollection

from zgain.figures.draw import (
    PALETTE,
    VARIANT_MARKERS,
    frontier_figure,
    information_by_position_figure,
    styles,
)
from zgain.figures.style import KNOWN
from zgain.sweep.figures import sweep_frontier_figure
from zgain.sweep.tables import Sweep

MANY = [f"variant_{i}" for i in range(30)]  # more than one cycle of colours and of markers


def test_no_two_of_many_variants_share_colour_and_marker() -> None:
    look = styles(MANY, additive=MANY[::2])
    pairs = [(st.colour, st.marker) for st in look.values()]
    assert len(set(pairs)) == len(MANY)
    assert len(MANY) > len(PALETTE) and len(MANY) > len(VARIANT_MARKERS)
    assert {look[v].linestyle for v in MANY[::2]} == {"--"}
    assert {look[v].linestyle for v in MANY[1::2]} == {"-"}


def test_a_variant_keeps_its_colour_and_marker_whatever_else_is_listed() -> None:
    """Keyed by name: the same look in a subset, in another order, beside a user's variants."""
    default = list(KNOWN)
    full = styles(default)
    for variants in (default[::-1], ["mean_tok", "mean_cc"], ["my_own", *default[:4]]):
        look = styles(variants)
        for v in set(variants) & set(default):
            assert (look[v].colour, look[v].marker) == (full[v].colour, full[v].marker)
    assert styles(["my_own", "x"])["my_own"] == styles(["y", "my_own"])["my_own"]
    assert len({(st.colour, st.marker) for st in styles([*default, *MANY]).values()}) == 41


def test_a_variant_extending_a_known_one_shares_its_colour_not_its_marker() -> None:
    look = styles(["mean_ex", "mean_ex_l0p5", "mean_ex_l2p0"])
    assert len({st.colour for st in look.values()}) == 1
    assert len({st.marker for st in look.values()}) == 3


def frontier_inputs(variants: list[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(0)
    metrics = ("kl", "z_information", "capture", "marginal_gain", "probe_accuracy")
    points = pd.DataFrame(
        [{"variant": v, "rate": 1.0, **{m: rng.random() for m in metrics}} for v in variants]
    )
    frontier = points.melt(id_vars=["variant", "rate"], var_name="metric", value_name="mean")
    return points, frontier


@pytest.mark.parametrize("count", [5, 17, 30])
def test_the_frontier_legend_tells_every_variant_apart_off_the_data(count: int) -> None:
    variants = MANY[:count]
    points, frontier = frontier_inputs(variants)
    fig = frontier_figure(points, frontier, variants, {"capture": 1.0})
    assert all(ax.get_legend() is None for ax in fig.axes)
    (legend,) = fig.legends
    drawn = {
        text.get_text(): (handle.get_color(), handle.get_marker(), handle.get_linestyle())
        for text, handle in zip(legend.get_texts(), legend.legend_handles, strict=True)
        if text.get_text() in variants
    }
    assert sorted(drawn) == sorted(variants)
    assert len(set(drawn.values())) == count


def test_the_sweep_frontier_tells_every_variant_apart_off_the_data() -> None:
    variants = MANY[:17]
    rows = pd.DataFrame(
        [
            {"experiment": "e", "variant": v, "kl": 1.0, "z_information": i, "marginal_gain": -i}
            for i, v in enumerate(variants)
        ]
    )
    fig = sweep_frontier_figure(Sweep(("x",), rows, 0.8))
    assert all(ax.get_legend() is None for ax in fig.axes)
    (legend,) = fig.legends
    assert [t.get_text() for t in legend.get_texts()][: len(variants)] == variants
    seen = set()
    for collection in (c for c in fig.axes[0].collections if isinstance(c, PathCollection)):
        colour = tuple(np.round(collection.get_facecolor()[0], 6))
        marker = collection.get_paths()[0].vertices.round(6).tobytes()
        seen.add((colour, marker))
    assert len(seen) == len(variants)


def test_a_variant_identical_to_an_earlier_one_says_so_in_every_legend() -> None:
    """Drawn over the variant it equals, it would vanish from the figure; its legend entry
    names that variant."""
    variants = ["token_mean", "dist_normalized", "mean_tok"]
    points, frontier = frontier_inputs(variants)
    look = styles(variants, same_as={"dist_normalized": "token_mean"})
    fig = frontier_figure(points, frontier, variants, {"capture": 1.0}, look=look)
    (legend,) = fig.legends
    assert [t.get_text() for t in legend.get_texts()][:3] == [
        "token_mean",
        "dist_normalized (identical to token_mean)",
        "mean_tok",
    ]
    positions = pd.DataFrame(
        [
            {"variant": v, "position": p, "mean": 0.1, "low": 0.0, "high": 0.2}
            for v in variants
            for p in range(3)
        ]
    )
    fig = information_by_position_figure(positions, variants, look)
    (legend,) = fig.legends
    assert "dist_normalized (identical to token_mean)" in [t.get_text() for t in legend.get_texts()]
