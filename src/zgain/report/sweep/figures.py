"""The figures of a sweep report: the frontier over experiments and the (α, γ) family maps."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from zgain.report.figures import ORACLE_COLOUR, WIDE, colours, new_figure
from zgain.report.sweep.tables import FAMILY_METRICS, Sweep

FAMILY_LABELS = {"capture": "capture I^θ / I*", "marginal_gain": "G^marg (nats/seq)"}


def sweep_frontier_figure(sweep: Sweep) -> Figure:
    """I^θ and G^marg against kl, one point per (experiment, variant), colour per variant."""
    fig, (left, right) = new_figure(WIDE, 2)
    variants = list(dict.fromkeys(sweep.rows["variant"]))
    palette = colours(variants)
    for ax, metric, label in (
        (left, "z_information", "z-information I^θ (nats/seq)"),
        (right, "marginal_gain", "marginal gain G^marg (nats/seq)"),
    ):
        for variant in variants:
            rows = sweep.rows[sweep.rows["variant"] == variant]
            ax.scatter(rows["kl"], rows[metric], color=palette[variant], label=variant, s=30)
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
    left.legend(fontsize="small", loc="best")
    return fig


def family_figure(points: pd.DataFrame, named: pd.DataFrame) -> Figure:
    """Capture and G^marg over the (α, γ) grid as annotated heat maps, named variants marked."""
    alphas = sorted(points["alpha"].unique())
    gammas = sorted(points["gamma"].unique())
    fig, axes = new_figure(WIDE, len(FAMILY_METRICS))
    for ax, metric in zip(axes, FAMILY_METRICS, strict=True):
        grid = np.full((len(gammas), len(alphas)), np.nan)
        for _, p in points.iterrows():
            grid[gammas.index(p["gamma"]), alphas.index(p["alpha"])] = p[metric]
        ax.grid(False)
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
        ax.set_title(f"{FAMILY_LABELS[metric]} over the unified family")
    return fig
