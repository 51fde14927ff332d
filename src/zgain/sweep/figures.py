"""The figures of a sweep report: the frontier over experiments and the (α, γ) family maps,
in the variants' colours and markers of zgain.figures.style."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from zgain.figures.draw import AXIS_LABELS, DPI, WIDE, new_figure, outside_legend
from zgain.figures.style import REFERENCE_STYLES, fit_axis, hatch_colour, pairs, styles
from zgain.sweep.tables import FAMILY_METRICS, Sweep

FAMILY_LABELS = {"capture": AXIS_LABELS["capture"], "marginal_gain": "G^marg (nats/seq)"}


def identical_variants(rows: pd.DataFrame) -> dict[str, str]:
    """Each variant whose row equals an earlier variant's in every experiment (kl, I^θ and
    G^marg), mapped to the first such variant: drawn over it, both stay visible."""
    metrics = ["kl", "z_information", "marginal_gain"]
    variants = list(dict.fromkeys(rows["variant"]))

    def scores(v: str) -> pd.DataFrame:
        mine = rows[rows["variant"] == v]
        return mine[["experiment", *metrics]].sort_values("experiment").reset_index(drop=True)

    same: dict[str, str] = {}
    for i, later in enumerate(variants):
        for earlier in (v for v in variants[:i] if v not in same):
            if scores(earlier).equals(scores(later)):
                same[later] = earlier
                break
    return same


def sweep_frontier_figure(sweep: Sweep) -> Figure:
    """I^θ and G^marg against kl, one point per (experiment, variant), a colour and marker per
    variant (zgain.figures.style); the axes set by the values within Tukey's fences, a variant
    past them an arrow at the edge; the legend below the panels."""
    fig, (left, right) = new_figure((WIDE[0], WIDE[1] + 1.0), 2)
    variants = list(dict.fromkeys(sweep.rows["variant"]))
    look = styles(variants, same_as=identical_variants(sweep.rows))
    for ax, metric, label in (
        (left, "z_information", AXIS_LABELS["z_information"]),
        (right, "marginal_gain", AXIS_LABELS["marginal_gain"]),
    ):
        values = {}
        for variant in variants:
            rows = sweep.rows[sweep.rows["variant"] == variant]
            st = look[variant]
            face = "none" if st.hollow else st.colour
            ax.scatter(
                rows["kl"], rows[metric], edgecolors=st.colour, facecolors=face, marker=st.marker,
                label=st.label, s=90 if st.hollow else 30, zorder=3,
            )  # fmt: skip
            values[variant] = pairs(rows["kl"], rows[metric])
        ax.axhline(0.0, **REFERENCE_STYLES["zero"])
        keep = [0.0]
        if metric == "z_information" and math.isfinite(sweep.oracle_info):
            ax.axhline(
                sweep.oracle_info, **REFERENCE_STYLES["oracle"],
                label=f"oracle I* = {sweep.oracle_info:.3f}",
            )  # fmt: skip
            keep.append(sweep.oracle_info)
        fit_axis(ax, values, look, keep)
        ax.set(xlabel="kl = KL(q ‖ p(z|x)) (nats/seq)", ylabel=label)
    left.set_title("z-information against rate")
    right.set_title("marginal gain against rate")
    n = sweep.rows["experiment"].nunique()
    fig.suptitle(f"Every experiment of the sweep ({n}), one point per experiment and variant")
    outside_legend(fig, left.get_legend_handles_labels()[0])
    return fig


def family_figure(points: pd.DataFrame, named: pd.DataFrame) -> Figure:
    """Capture and G^marg over the (α, γ) grid as annotated heat maps, one row of panels per
    target rate, the named variants marked in their cells."""
    alphas = sorted(points["alpha"].unique())
    gammas = sorted(points["gamma"].unique())
    rates = sorted(points["rate"].unique())
    fig = Figure(figsize=(WIDE[0], WIDE[1] * len(rates)), dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    for row, rate in enumerate(rates):
        at_rate, named_here = points[points["rate"] == rate], named[named["rate"] == rate]
        for col, metric in enumerate(FAMILY_METRICS):
            ax = fig.add_subplot(
                len(rates), len(FAMILY_METRICS), row * len(FAMILY_METRICS) + col + 1
            )
            family_panel(fig, ax, at_rate, named_here, metric, alphas, gammas)
            ax.set_title(f"{FAMILY_LABELS[metric]}, C = {rate:g}")
    fig.suptitle("The (α, γ) family: capture and G^marg in each cell, the named variants boxed")
    return fig


def family_panel(
    fig: Figure,
    ax: Axes,
    points: pd.DataFrame,
    named: pd.DataFrame,
    metric: str,
    alphas: list[float],
    gammas: list[float],
) -> None:
    """One heat map of `metric` over (α, γ), each named variant's value in its cell."""
    grid = np.full((len(gammas), len(alphas)), np.nan)
    for _, p in points.iterrows():
        grid[gammas.index(p["gamma"]), alphas.index(p["alpha"])] = p[metric]
    image = ax.imshow(grid, origin="lower", cmap="viridis", aspect="auto")
    fig.colorbar(image, ax=ax, label=FAMILY_LABELS[metric])
    for (g, a), value in np.ndenumerate(grid):
        if math.isfinite(value):
            ink = hatch_colour(image.cmap(image.norm(value)))  # white on dark, black on light
            ax.text(a, g, f"{value:.3f}", ha="center", va="center", color=ink, fontsize=8)
    marks: dict[tuple[int, int], list[str]] = {}
    for _, n in named.iterrows():
        if n["alpha"] in alphas and n["gamma"] in gammas:
            cell = (alphas.index(n["alpha"]), gammas.index(n["gamma"]))
            marks.setdefault(cell, []).append(f"{n['variant']} {n[metric]:.3f}")
    for (x, y), labels in marks.items():
        ax.text(
            x,
            y - 0.42,
            "\n".join(labels),
            ha="center",
            va="bottom",
            fontsize=6,
            color="black",
            bbox={"boxstyle": "round", "fc": "white", "alpha": 0.8},
        )
    ax.set_xticks(range(len(alphas)), [f"{a:g}" for a in alphas])
    ax.set_yticks(range(len(gammas)), [f"{g:g}" for g in gammas])
    ax.set(xlabel="α (token weights ∝ (b_t + ε)^α)", ylabel="γ (example weights (b_i + ε)^−γ)")
