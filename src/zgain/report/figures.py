"""The figures of `reports/figures/`, drawn on the Agg canvas (no pyplot state) at fixed sizes,
so the same inputs give the same PNG bytes; colours and markers follow the variants' order."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_rgba
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator

from zgain.core.io import atomic_path
from zgain.core.runs import rate_label
from zgain.params import CommonCVAEParams
from zgain.report.context import Context
from zgain.report.frontier import FRONTIER_METRICS
from zgain.report.loading import per_run
from zgain.report.plateau import mean_curves, plateau_window, validated, window_name
from zgain.report.registry import FRONTIER, POSITIONS
from zgain.report.statistics import Interval
from zgain.report.tables import DECOMPOSITION, ORACLE

DPI = 120
WIDE, SQUARE = (11.0, 4.6), (7.2, 4.6)  # inches
# one colour and one marker per variant (params order): 12 colours, and the markers shift by one
# each time the colours cycle, so no two of up to 144 variants share both; a replacement variant
# (one reconstruction term) is drawn solid, an additive one dashed
PALETTE = (
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
    "#e377c2", "#17becf", "#bcbd22", "#000000", "#7f7f7f", "#aec7e8",
)  # fmt: skip
VARIANT_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">", "h", "p")
VERDICT_COLOURS = {
    "better": "#2ca02c",
    "worse": "#d62728",
    "equivalent": "#1f77b4",
    "undetermined": "#7f7f7f",
}
ORACLE_COLOUR = "dimgrey"
MARGINAL_HATCH = "//"
MARGINAL_ALPHA, Z_ALPHA = 0.35, 0.9
# No "Software" entry: the bytes then do not change with the matplotlib version.
PNG_METADATA: dict[str, str | None] = {"Software": None}


def colours(variants: Sequence[str]) -> dict[str, str]:
    return {v: PALETTE[i % len(PALETTE)] for i, v in enumerate(variants)}


@dataclass(frozen=True)
class Style:
    colour: str
    marker: str
    linestyle: str
    label: str = ""  # the variant's legend entry

    def plot(self, ax: Axes, x: Sequence, y: Sequence, **kwargs) -> None:
        """A line in this style through (x, y), more of matplotlib's keywords in `kwargs`."""
        ax.plot(x, y, color=self.colour, marker=self.marker, linestyle=self.linestyle, **kwargs)


def styles(
    variants: Sequence[str], additive: Sequence[str] = (), same_as: Mapping[str, str] = {}
) -> dict[str, Style]:
    """A colour and a marker per variant; dashed for the additive variants, solid otherwise. A
    variant of `same_as` (zgain.report.frontier.identical_runs) is drawn over the one it equals,
    which its legend entry names."""
    palette = colours(variants)
    return {
        v: Style(
            palette[v],
            VARIANT_MARKERS[(i + i // len(PALETTE)) % len(VARIANT_MARKERS)],
            "--" if v in additive else "-",
            f"{v} (identical to {same_as[v]})" if v in same_as else v,
        )
        for i, v in enumerate(variants)
    }


def outside_legend(fig: Figure, handles: list, title: str | None = None) -> None:
    """The legend right of the panels, off the data."""
    fig.legend(handles=handles, loc="outside right upper", fontsize="small", title=title)


def new_figure(
    size: tuple[float, float], n_panels: int = 1, columns: int = 0, grid: bool = True
) -> tuple[Figure, list[Axes]]:
    """A figure of `n_panels` panels, `columns` (default: all) to a row, each gridded unless
    `grid` is False."""
    fig = Figure(figsize=size, dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    columns = columns or n_panels
    rows = -(-n_panels // columns)
    axes = [fig.add_subplot(rows, columns, i + 1) for i in range(n_panels)]
    for ax in axes if grid else ():
        ax.grid(alpha=0.3)
    return fig, axes


AXIS_LABELS = {
    "z_information": "z-information I^θ (nats/seq)",
    "capture": "capture I^θ / I*",
    "marginal_gain": "marginal gain G^marg (nats/seq)",
    "probe_accuracy": "probe accuracy (strategy from z)",
}
"""Each plotted metric's axis label, with its unit (the sweep report's figures use them too)."""
REFERENCE_LABELS = {"z_information": "oracle I*", "probe_accuracy": "Bayes ceiling"}
"""The frontier panels' dotted references that carry a label (their value beside it)."""


def frontier_figure(
    points: pd.DataFrame,
    frontier: pd.DataFrame,
    variants: Sequence[str],
    references: dict[str, float],
    panels: Sequence[str] | None = None,
    look: dict[str, Style] | None = None,
    title: str | None = None,
) -> Figure:
    """Panels of `panels` (None: all four) against the achieved KL (nats/seq), from `points` (one
    row per run): each variant's curve through its seed means at each rate, every run a small
    point, and the dotted reference of a panel from `references` (by metric)."""
    shown = [metric for metric in AXIS_LABELS if panels is None or metric in panels]
    fig, axes = new_figure((13.0, 4.2 * (2 if len(shown) > 2 else 1)), len(shown), 2)
    look = look or styles(variants)
    for ax, metric in zip(axes, shown, strict=True):
        label, ref_label = AXIS_LABELS[metric], REFERENCE_LABELS.get(metric)
        for variant in variants:
            st = look[variant]
            runs = points[points["variant"] == variant]
            mine = frontier[frontier["variant"] == variant]
            means = mine.pivot(index="rate", columns="metric", values="mean").sort_index()
            st.plot(ax, means["kl"], means[metric], markersize=6)
            ax.scatter(
                runs["kl"], runs[metric], color=st.colour, marker=st.marker, s=10, alpha=0.4,
                zorder=3,
            )  # fmt: skip
        if metric in references:
            value = references[metric]
            text = f"{ref_label} = {value:.3f}" if ref_label else None
            ax.axhline(value, color=ORACLE_COLOUR, linestyle=":", label=text)
        if metric == "probe_accuracy" and "probe_floor" in references:
            floor = references["probe_floor"]
            ax.axhline(
                floor, color=ORACLE_COLOUR, linestyle="-.", label=f"x-only floor = {floor:.3f}"
            )
        if metric in ("z_information", "marginal_gain"):
            ax.axhline(0.0, color="grey", linewidth=0.8)
        ax.set(xlabel="achieved kl = KL(q ‖ p(z|x)) (nats/seq)", ylabel=label)
    handles = [
        Line2D([], [], color=st.colour, linestyle=st.linestyle, marker=st.marker, label=st.label)
        for st in (look[v] for v in variants)
    ]
    for ax in axes:
        handles += [h for h in ax.get_legend_handles_labels()[0]]
    outside_legend(fig, handles)
    if title:
        fig.suptitle(title)
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
    decomposition: pd.DataFrame,
    variants: Sequence[str],
    oracle: bool = True,
    look: dict[str, Style] | None = None,
) -> Figure:
    """Gross gain per variant as stacked bars marginal + z-information (seed means, nats/seq).

    Bars stack positive parts upward and negative parts downward from 0; the black dot is the
    gross gain (their sum) with its t-interval over seeds; the oracle bar stands beside.
    """
    fig, (ax,) = new_figure(SQUARE)
    cells = decomposition.set_index(["variant", "metric"])
    palette = {v: st.colour for v, st in (look or styles(variants)).items()}
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
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
    )
    return fig


def information_by_position_figure(
    by_position: pd.DataFrame, variants: Sequence[str], look: dict[str, Style] | None = None
) -> Figure:
    """Mean per-token z-information i^θ_t (nats) by target position, per variant and oracle i*_t.

    Lines are means pooled over seeds; the band is the t-interval over the per-seed means.
    """
    fig, (ax,) = new_figure((9.0, 4.6))
    look = look or styles(variants)
    for name in [*variants, ORACLE]:
        rows = by_position[by_position["variant"] == name].sort_values("position", kind="stable")
        oracle = name == ORACLE
        if oracle and rows.empty:  # no per-token oracle (a pairs file)
            continue
        st = Style(ORACLE_COLOUR, "o", ":") if oracle else look[name]
        label = "oracle i*_t" if oracle else st.label
        st.plot(ax, rows["position"], rows["mean"], linewidth=2.5 if oracle else 1.5, label=label)
        if not oracle and rows["low"].notna().any():
            ax.fill_between(
                rows["position"], rows["low"], rows["high"], color=st.colour, alpha=0.08
            )
    ax.axhline(0.0, color="grey", linewidth=0.8)
    ax.set(
        xlabel="target position t (y tokens, then EOS)",
        ylabel="mean per-token information (nats)",
        title="z-information by position",
    )
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    outside_legend(fig, ax.get_legend_handles_labels()[0])
    return fig


def learning_figure(
    curve: pd.DataFrame, common: CommonCVAEParams, variants: Sequence[str], oracle_info: float,
    headline: float, additive: Sequence[str] = (), over: str = "seeds", tier: str = "",
    same_as: Mapping[str, str] = {},
) -> Figure:  # fmt: skip
    """Validation I^θ (mean `over` seeds, or the confirming tier's replicates) against the step,
    per variant, at the headline rate, with the oracle's mean I* as a reference line and the
    plateau rule's window shaded; `tier` names the runs in the title; `same_as` as in
    `styles`."""
    steps, window = common.steps, plateau_window(common)
    means = mean_curves(validated(curve, common.val_every, steps))
    look = styles(variants, additive, same_as)
    fig, (ax,) = new_figure((9.0, 4.6))
    for name in (v for v in variants if v in means.columns):
        look[name].plot(ax, means.index, means[name], linewidth=1.5, label=look[name].label)
    if math.isfinite(oracle_info):
        ax.axhline(oracle_info, color=ORACLE_COLOUR, linestyle=":", linewidth=2, label="oracle I*")
    ax.axvspan(window[0] * steps, window[1] * steps, color="grey", alpha=0.08)
    shaded = window_name(window)
    ax.set(
        xlabel="training step",
        ylabel=f"validation I^θ (nats/seq, mean over {over})",
        title=f"{tier}Learning curves at C = {rate_label(headline)} (shaded: {shaded})",
    )
    outside_legend(fig, ax.get_legend_handles_labels()[0])
    return fig


def save_png(fig: Figure, path: str | Path) -> None:
    """Write `fig` as PNG, atomically."""
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=DPI, metadata=PNG_METADATA)


def build_figures(
    ctx: Context,
    forests: Mapping[str, Figure],
    top: Sequence[str],
    additive: Sequence[str],
    same_as: Mapping[str, str] = {},
) -> dict[str, Figure]:
    """Every figure of the report by file name: the frontier, the `top` group's frontier on its
    own scale, the `forests` (zgain.report.forest.forest_figures), the headline rate's
    decomposition and positions; `additive`: the variants drawn dashed; `same_as` as in
    `styles`."""
    results, coverage, variants = ctx.results, ctx.coverage, ctx.results.variants
    points, frontier = per_run(ctx.by_rate, FRONTIER_METRICS), ctx.tables[FRONTIER.name]
    references = {
        "z_information": results.split_value("oracle_info"),
        "capture": 1.0,
        "probe_accuracy": results.split_value("probe_ceiling"),
        "probe_floor": results.split_value("probe_floor"),
    }
    references = {name: value for name, value in references.items() if math.isfinite(value)}
    panels = None if coverage.complete else coverage.panels()
    look = styles(variants, additive, same_as)
    figures = {
        "frontier.png": frontier_figure(points, frontier, variants, references, panels, look)
    }
    if top and len(top) < len(variants):
        figures["frontier_top.png"] = frontier_figure(
            points[points["variant"].isin(top)], frontier, list(top), references, panels, look,
            title=f"The top group alone: {', '.join(top)}",
        )  # fmt: skip
    figures |= forests
    figures["gain_decomposition.png"] = decomposition_figure(
        ctx.tables[DECOMPOSITION.name], variants, coverage.oracle, look
    )
    figures["information_by_position.png"] = information_by_position_figure(
        ctx.tables[POSITIONS.name], variants, look
    )
    return figures
