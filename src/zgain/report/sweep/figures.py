"""The figures of a sweep report: the frontier over experiments and the (α, γ) family maps."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from zgain.report.figures import (
    AXIS_LABELS,
    DPI,
    ORACLE_COLOUR,
    WIDE,
    new_figure,
    outside_legend,
    styles,
)
from zgain.report.sweep.tables import FAMILY_METRICS, Sweep

FAMILY_LABELS = {"capture": AXIS_LABELS["capture"], "marginal_gain": "G^marg (nats/seq)"}


def sweep_frontier_figure(sweep: Sweep) -> Figure:
    """I^θ and G^marg against kl, one point per (experiment, variant), a colour and marker per
    variant; the legend right of the panels."""
    fig, (left, right) = new_figure(WIDE, 2)
    variants = list(dict.fromkeys(sweep.rows["variant"]))
    look = styles(variants)
    for ax, metric, label in (
        (left, "z_information", AXIS_LABELS["z_information"]),
        (right, "marginal_gain", AXIS_LABELS["marginal_gain"]),
    ):
        for variant in variants:
            rows = sweep.rows[sweep.rows["variant"] == variant]
            st = look[variant]
            ax.scatter(
                rows["kl"], rows[metric], color=st.colour, marker=st.marker, label=variant, s=30
            )
        ax.axhline(0.0, color="grey", linewidth=0.8)
        ax.set(xlabel="kl = KL(q ‖ p(z|x)) (nats/seq)", ylabel=label)
    if math.isfinite(sweep.oracle_info):
        left.axhline(
            sweep.oracle_info,
            color=ORACLE_COLOUR,
            linestyle="--",
            label=f"oracle I* = {sweep.oracle_info:.3f}",
        )
    left.set_title("z-information against rate, every experiment")
    right.set_title("marginal gain against rate, every experiment")
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
            ax.text(a, g, f"{value:.3f}", ha="center", va="center", color="white", fontsize=8)
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
