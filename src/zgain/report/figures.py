"""The figures of `reports/figures/`, drawn headless and deterministically.

Figures are built on the Agg canvas directly (no pyplot, so no global backend or figure
state) at fixed sizes: the same inputs give the same PNG bytes. Colours follow the variants'
params order, markers the seeds' (docs/method.md#evaluation-quantities for the quantities,
docs/method.md#uncertainty-over-seeds for the intervals).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import pandas as pd
from matplotlib import colormaps
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_rgba
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator

from zgain.core.io import atomic_path
from zgain.report.statistics import Interval
from zgain.report.tables import ORACLE

DPI = 120
WIDE, SQUARE = (11.0, 4.6), (7.2, 4.6)  # inches
PALETTE = "tab10"
SEED_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">")
ORACLE_COLOUR = "dimgrey"
MARGINAL_HATCH = "//"
MARGINAL_ALPHA, Z_ALPHA = 0.35, 0.9
# No "Software" entry: the bytes then do not change with the matplotlib version.
PNG_METADATA: dict[str, str | None] = {"Software": None}


def colours(variants: Sequence[str]) -> dict[str, tuple]:
    cmap = colormaps[PALETTE]
    return {v: cmap(i % cmap.N) for i, v in enumerate(variants)}


def new_figure(size: tuple[float, float], n_panels: int = 1) -> tuple[Figure, list[Axes]]:
    fig = Figure(figsize=size, dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    axes = [fig.add_subplot(1, n_panels, i + 1) for i in range(n_panels)]
    for ax in axes:
        ax.grid(alpha=0.3)
    return fig, axes


FRONTIER_PANELS = (
    ("z_information", "z-information I^θ (nats/seq)", "oracle I*"),
    ("capture", "capture I^θ / I*", None),
    ("marginal_gain", "marginal gain G^marg (nats/seq)", None),
    ("probe_accuracy", "probe accuracy (strategy from z)", "Bayes ceiling"),
)


def frontier_figure(
    points: pd.DataFrame,
    variants: Sequence[str],
    seeds: Sequence[int],
    references: dict[str, float],
    panels: Sequence[str] | None = None,
) -> Figure:
    """Four panels against the achieved KL (nats/seq): I^θ, capture, G^marg, probe accuracy;
    `panels` names the metrics to draw when the data lacks some (None: all four).

    points: one row per run (variant, rate, seed, kl and the panels' metrics). Each variant is a
    curve through its seed means at each target rate, with every run as a point (marker per
    seed). references: the dashed line of a panel by metric (the oracle's I* for I^θ, 1 for
    capture, the Bayes ceiling for the probe); the probe panel also draws the x-only floor.
    """
    shown = [panel for panel in FRONTIER_PANELS if panels is None or panel[0] in panels]
    rows = 2 if len(shown) > 2 else 1
    fig = Figure(figsize=(11.0, 4.2 * rows), dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    axes = [fig.add_subplot(rows, 2, i + 1) for i in range(len(shown))]
    palette = colours(variants)
    markers = {s: SEED_MARKERS[i % len(SEED_MARKERS)] for i, s in enumerate(seeds)}
    for ax, (metric, label, ref_label) in zip(axes, shown, strict=True):
        ax.grid(alpha=0.3)
        for variant in variants:
            runs = points[points["variant"] == variant]
            means = runs.groupby("rate", sort=True)[["kl", metric]].mean()
            ax.plot(means["kl"], means[metric], color=palette[variant])
            for _, run in runs.iterrows():
                ax.scatter(
                    run["kl"],
                    run[metric],
                    color=palette[variant],
                    marker=markers[run["seed"]],
                    s=22,
                    alpha=0.7,
                    zorder=3,
                )
        if metric in references:
            value = references[metric]
            text = f"{ref_label} = {value:.3f}" if ref_label else None
            ax.axhline(value, color=ORACLE_COLOUR, linestyle="--", label=text)
        if metric == "probe_accuracy" and "probe_floor" in references:
            floor = references["probe_floor"]
            ax.axhline(
                floor, color=ORACLE_COLOUR, linestyle=":", label=f"x-only floor = {floor:.3f}"
            )
        if metric in ("z_information", "marginal_gain"):
            ax.axhline(0.0, color="grey", linewidth=0.8)
        ax.set(xlabel="achieved kl = KL(q ‖ p(z|x)) (nats/seq)", ylabel=label)
    handles = [Line2D([], [], color=palette[v], label=v) for v in variants]
    handles += [
        Line2D([], [], color="grey", marker=markers[s], linestyle="", label=f"seed {s}")
        for s in seeds
    ]
    references = axes[0].get_legend_handles_labels()[0]  # the oracle's I*
    axes[0].legend(handles=handles + references, fontsize="small", loc="best")
    for ax in axes[1:]:
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize="small", loc="best")
    return fig


def bar_style(colour: tuple | str, alpha: float, hatch: str) -> dict:
    """A bar filled with `colour` at `alpha`, black hatching (matplotlib hatches in edgecolor)."""
    return {
        "facecolor": to_rgba(colour, alpha),
        "edgecolor": "black",
        "linewidth": 0.0,
        "hatch": hatch,
    }


def stacked_bar(ax: Axes, x: float, parts: Sequence[tuple[float, dict]]) -> None:
    """Diverging stacked bar: positive parts stack up from 0, negative ones down from 0."""
    up, down = 0.0, 0.0
    for value, style in parts:
        if not math.isfinite(value):
            continue
        if value >= 0:
            ax.bar(x, value, bottom=up, **style)
            up += value
        else:
            ax.bar(x, value, bottom=down, **style)
            down += value


def decomposition_figure(
    decomposition: pd.DataFrame, variants: Sequence[str], oracle: bool = True
) -> Figure:
    """Gross gain per variant as stacked bars marginal + z-information (seed means, nats/seq).

    Bars stack positive parts upward and negative parts downward from 0; the black dot is the
    gross gain (their sum) with its t-interval over seeds; the oracle bar stands beside.
    """
    fig, (ax,) = new_figure(SQUARE)
    cells = decomposition.set_index(["variant", "metric"])
    palette = colours(variants)
    names = [*variants, ORACLE] if oracle else list(variants)
    for x, name in enumerate(names):
        colour = palette.get(name, ORACLE_COLOUR)
        marginal = cells.loc[(name, "marginal_gain")]
        z_info = cells.loc[(name, "z_information")]
        gross = cells.loc[(name, "gross_gain")]
        stacked_bar(
            ax,
            x,
            [
                (marginal["mean"], bar_style(colour, MARGINAL_ALPHA, MARGINAL_HATCH)),
                (z_info["mean"], bar_style(colour, Z_ALPHA, "")),
            ],
        )
        if Interval.of(gross).has_interval:
            err = [[gross["mean"] - gross["low"]], [gross["high"] - gross["mean"]]]
        else:
            err = None
        ax.errorbar(x, gross["mean"], yerr=err, fmt="o", color="black", capsize=4, zorder=3)
    ax.axhline(0.0, color="black", linewidth=0.8)
    ax.set_xticks(range(len(names)), names, rotation=30, ha="right")
    ax.set(ylabel="nats/seq", title="Gross gain = marginal (hatched) + z-information (solid)")
    ax.legend(
        handles=[
            Patch(**bar_style("grey", MARGINAL_ALPHA, MARGINAL_HATCH), label="marginal_gain"),
            Patch(**bar_style("grey", Z_ALPHA, ""), label="z_information"),
            Line2D([], [], color="black", marker="o", label="gross_gain (interval)"),
        ],
        fontsize="small",
    )
    return fig


def information_by_position_figure(by_position: pd.DataFrame, variants: Sequence[str]) -> Figure:
    """Mean per-token z-information i^θ_t (nats) by target position, per variant and oracle i*_t.

    Lines are means pooled over seeds; the band is the t-interval over the per-seed means.
    """
    fig, (ax,) = new_figure(SQUARE)
    palette = colours(variants)
    for name in [*variants, ORACLE]:
        rows = by_position[by_position["variant"] == name].sort_values("position", kind="stable")
        oracle = name == ORACLE
        if oracle and rows.empty:  # no per-token oracle (a pairs file)
            continue
        ax.plot(
            rows["position"],
            rows["mean"],
            marker="o",
            color=ORACLE_COLOUR if oracle else palette[name],
            linestyle="--" if oracle else "-",
            label="oracle i*_t" if oracle else name,
        )
        if not oracle and rows["low"].notna().any():
            ax.fill_between(
                rows["position"], rows["low"], rows["high"], color=palette[name], alpha=0.15
            )
    ax.axhline(0.0, color="grey", linewidth=0.8)
    ax.set(
        xlabel="target position t (y tokens, then EOS)",
        ylabel="mean per-token information (nats)",
        title="z-information by position",
    )
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.legend(fontsize="small")
    return fig


def save_png(fig: Figure, path: str | Path) -> None:
    """Write `fig` as PNG, atomically."""
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=DPI, metadata=PNG_METADATA)


def build_figures(
    points: pd.DataFrame,
    decomposition: pd.DataFrame,
    by_position: pd.DataFrame,
    variants: Sequence[str],
    seeds: Sequence[int],
    references: dict[str, float],
    panels: Sequence[str] | None = None,
    oracle: bool = True,
) -> dict[str, Figure]:
    """Every figure of the report by file name (see the functions for what each shows):
    the frontier over every run, and the headline rate's decomposition and positions; `panels`
    as in `frontier_figure`; `oracle`: whether the decomposition has an oracle bar."""
    return {
        "frontier.png": frontier_figure(points, variants, seeds, references, panels),
        "gain_decomposition.png": decomposition_figure(decomposition, variants, oracle),
        "information_by_position.png": information_by_position_figure(by_position, variants),
    }
