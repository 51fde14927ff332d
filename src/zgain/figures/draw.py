"""The figures of `reports/figures/`, drawn on the Agg canvas (no pyplot state) at fixed sizes,
so the same inputs give the same PNG bytes; every variant in its colour and marker of
zgain.figures.style, every axis set by the compared group (an outlier an arrow at the edge)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
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
from zgain.figures.style import (
    AXIS_LABELS,
    COLOURS,
    MARKERS,
    ORACLE_COLOUR,
    REFERENCE_STYLES,
    REFERENCES,
    Style,
    bracket,
    fit_axis,
    handle,
    hatch_colour,
    inliers,
    nesting,
    pairs,
    runs_phrase,
    styles,
    table_runs,
)
from zgain.figures.style import VERDICT_COLOURS as VERDICT_COLOURS  # imported from here
from zgain.figures.style import colours as colours
from zgain.params import CommonCVAEParams
from zgain.results.analysis.plateau import mean_curves, plateau_window, validated, window_name
from zgain.results.analysis.tables import ORACLE
from zgain.stats.intervals import Interval

DPI = 120
WIDE, SQUARE = (11.0, 4.6), (7.2, 4.6)  # inches
PALETTE, VARIANT_MARKERS = COLOURS, MARKERS  # the names other modules import
MARGINAL_HATCH = "//"
MARGINAL_ALPHA, Z_ALPHA = 0.35, 0.9
# No "Software" entry: the bytes then do not change with the matplotlib version.
PNG_METADATA: dict[str, str | None] = {"Software": None}


def outside_legend(fig: Figure, handles: list, title: str | None = None) -> None:
    """The legend below the panels, off the data and clear of the title."""
    columns = min(len(handles), 4) or 1
    fig.legend(
        handles=handles, loc="outside lower center", fontsize="small", title=title,
        ncols=columns, title_fontsize="small",
    )  # fmt: skip


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


def frontier_figure(
    points: pd.DataFrame,
    frontier: pd.DataFrame,
    variants: Sequence[str],
    references: dict[str, float],
    panels: Sequence[str] | None = None,
    look: dict[str, Style] | None = None,
    title: str | None = None,
    group: Sequence[str] = (),
) -> Figure:
    """Panels of `panels` (None: all four) against the achieved KL (nats/seq), from `points` (one
    row per run): each variant's curve through its seed means at each rate, every run a small
    point, each panel's reference lines from `references` (by metric); the y axis set by the
    `group` and the values within Tukey's fences (`fit_axis`)."""
    shown = [metric for metric in AXIS_LABELS if panels is None or metric in panels]
    fig, axes = new_figure((13.0, 4.2 * (2 if len(shown) > 2 else 1) + 0.9), len(shown), 2)
    look = look or styles(variants)
    drawn: dict[str, Line2D] = {}
    for ax, metric in zip(axes, shown, strict=True):
        values: dict[str, list[tuple[float, float]]] = {}
        nested_in = [v for v in variants if v in group] or list(variants)
        for variant in variants:
            st, nested = look[variant], nesting(variant, nested_in)
            runs = points[points["variant"] == variant]
            mine = frontier[frontier["variant"] == variant]
            means = mine.pivot(index="rate", columns="metric", values="mean").sort_index()
            st.plot(ax, means["kl"], means[metric], **nested)
            ax.scatter(
                runs["kl"], runs[metric], color=st.colour, marker=st.marker, s=10, alpha=0.4,
                zorder=3,
            )  # fmt: skip
            values[variant] = pairs(means["kl"], means[metric]) + pairs(runs["kl"], runs[metric])
        keep = []
        for name in (metric, "probe_floor") if metric == "probe_accuracy" else (metric,):
            if name in references:
                kind, text = REFERENCES[name]
                ax.axhline(references[name], **REFERENCE_STYLES[kind])
                label = text.format(references[name])
                drawn.setdefault(name, Line2D([], [], label=label, **REFERENCE_STYLES[kind]))
                keep.append(references[name])
        if metric in ("z_information", "marginal_gain"):
            ax.axhline(0.0, **REFERENCE_STYLES["zero"])
        fit_axis(ax, values, look, keep, group)
        ax.set(xlabel="achieved kl = KL(q ‖ p(z|x)) (nats/seq)", ylabel=AXIS_LABELS[metric])
    outside_legend(fig, [handle(look[v]) for v in variants] + list(drawn.values()))
    runs = table_runs(frontier, variants)
    rates = sorted(frontier["rate"].unique())
    default = (
        "The frontier: every variant at each target rate"
        if len(rates) > 1
        else f"Every variant at its one target rate, C = {rates[0]:g}: no frontier"
    )
    fig.suptitle(f"{title or default}{bracket(runs)}")
    return fig


def bar_style(colour: tuple | str, alpha: float, hatch: str) -> dict:
    """A bar filled with `colour` at `alpha`, hatched in black or white (whichever shows on the
    face; matplotlib hatches in edgecolor)."""
    face = to_rgba(colour, alpha)
    shown = tuple(alpha * c + (1 - alpha) for c in face[:3])  # the face over white
    return {"facecolor": face, "edgecolor": hatch_colour(shown), "linewidth": 0.0, "hatch": hatch}


def stacked_bar(ax: Axes, x: float, parts: Sequence[tuple[float, dict]]) -> tuple[float, float]:
    """Diverging stacked bar: positive parts stack up from 0, negative ones down from 0; returns
    its (lowest, highest) end."""
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
    return down, up


def decomposition_figure(
    decomposition: pd.DataFrame,
    variants: Sequence[str],
    oracle: bool = True,
    look: dict[str, Style] | None = None,
    group: Sequence[str] = (),
) -> Figure:
    """Gross gain per variant as stacked bars marginal + z-information (seed means, nats/seq).

    Bars stack positive parts upward and negative parts downward from 0; the black dot is the
    gross gain (their sum) with its t-interval over seeds where there is one; the oracle bar
    stands beside. A second panel draws the marginal part alone on its own scale (its dot and
    interval likewise). Each axis is set by the group and the bars within Tukey's fences (the
    oracle's among them): a bar past it is cut at the edge with an arrow giving its end.
    """
    fig, (ax, right) = new_figure((13.0, 5.4), 2)
    cells = decomposition.set_index(["variant", "metric"])
    look = look or styles(variants)
    names = [*variants, ORACLE] if oracle else list(variants)
    ends: dict[str, list[tuple[float, ...]]] = {}
    costs: dict[str, list[tuple[float, ...]]] = {}
    intervals = False
    for x, name in enumerate(names):
        colour = look[name].colour if name in look else ORACLE_COLOUR
        marginal = cells.loc[(name, "marginal_gain")]
        z_info = cells.loc[(name, "z_information")]
        gross = cells.loc[(name, "gross_gain")]
        hatched = bar_style(colour, MARGINAL_ALPHA, MARGINAL_HATCH)
        low, high = stacked_bar(
            ax, x, [(marginal["mean"], hatched), (z_info["mean"], bar_style(colour, Z_ALPHA, ""))]
        )
        ends[name] = [(x, low), (x, high), *interval_dot(ax, x, gross)]
        right.bar(x, marginal["mean"], **hatched)
        costs[name] = [(x, 0.0), *interval_dot(right, x, marginal)]
        intervals |= len(ends[name][-1]) > 2
    every = {**look, ORACLE: Style(ORACLE_COLOUR, "o", "-")}
    fit_axis(ax, ends, every, [], group, named=False)
    fit_axis(right, costs, every, [], group, named=False)
    for panel in (ax, right):
        panel.axhline(0.0, color="black", linewidth=0.8)
        panel.set_xticks(range(len(names)), names, rotation=30, ha="right")
    runs = table_runs(decomposition, variants)
    ax.set(ylabel="nats/seq", title="Gross gain = marginal (hatched) + z-information (solid)")
    right.set(ylabel="nats/seq", title="The marginal part alone, on its own scale")
    fig.suptitle(f"Gain decomposition at the headline rate{bracket(runs)}")
    dot = (
        "each dot: the bar's total with its interval" if intervals else "each dot: the bar's total"
    )
    outside_legend(
        fig,
        [
            Patch(**bar_style("lightgrey", 1.0, MARGINAL_HATCH), label="marginal_gain (hatched)"),
            Patch(**bar_style("grey", Z_ALPHA, ""), label="z_information (solid)"),
            Line2D([], [], color="black", marker="o", linestyle="", label=dot),
        ],
    )
    return fig


def interval_dot(ax: Axes, x: float, cell: pd.Series) -> list[tuple[float, ...]]:
    """The cell's mean as a black dot at x with its interval where there is one; the point
    drawn, (x, mean, low, high) with an interval, else (x, mean)."""
    if Interval.of(cell).has_interval:
        err = [[cell["mean"] - cell["low"]], [cell["high"] - cell["mean"]]]
        ax.errorbar(x, cell["mean"], yerr=err, fmt="o", color="black", capsize=4, zorder=3)
        return [(x, cell["mean"], cell["low"], cell["high"])]
    ax.plot(x, cell["mean"], "o", color="black", zorder=3)
    return [(x, cell["mean"])]


def information_by_position_figure(
    by_position: pd.DataFrame,
    variants: Sequence[str],
    look: dict[str, Style] | None = None,
    group: Sequence[str] = (),
) -> Figure:
    """Mean per-token z-information i^θ_t (nats) by target position: at each position one
    stemmed marker per variant side by side, the t-interval over the per-seed means as an error
    bar where there is one, and the oracle's i*_t as a dotted bar across the position; the axis
    set by the group and the values within Tukey's fences (`fit_axis`)."""
    fig, (ax,) = new_figure((10.0, 5.4))
    look = look or styles(variants)
    width = 0.8 / max(len(variants), 1)
    values: dict[str, list[tuple[float, float]]] = {}
    keep, intervals = [], False
    for i, name in enumerate(variants):
        rows = by_position[by_position["variant"] == name].sort_values("position", kind="stable")
        st = look[name]
        x = rows["position"] + (i - (len(variants) - 1) / 2) * width
        ax.vlines(x, 0.0, rows["mean"], color=st.colour, linewidth=1.0)
        st.plot(ax, x, rows["mean"], markersize=5, linestyle="none", zorder=3)
        values[name] = pairs(x, rows["mean"])
        if rows["low"].notna().any():
            err = [rows["mean"] - rows["low"], rows["high"] - rows["mean"]]
            ax.errorbar(x, rows["mean"], yerr=err, fmt="none", ecolor=st.colour, elinewidth=0.8)
            values[name] = list(zip(x, rows["mean"], rows["low"], rows["high"], strict=True))
            intervals = True
    oracle = by_position[by_position["variant"] == ORACLE]  # none for a pairs file
    ax.hlines(
        oracle["mean"], oracle["position"] - 0.45, oracle["position"] + 0.45, linewidth=2.0,
        **{k: v for k, v in REFERENCE_STYLES["oracle"].items() if k != "linewidth"},
    )  # fmt: skip
    keep += oracle["mean"].tolist()
    ax.axhline(0.0, **REFERENCE_STYLES["zero"])
    fit_axis(ax, values, look, keep, group)
    runs = table_runs(by_position, variants)
    bars = "; bars: interval over seeds" if intervals else ""
    ax.set(
        xlabel="target position t (y tokens, then EOS)",
        ylabel="mean per-token information (nats)",
        title=f"z-information by position{bracket(runs + bars)}",
    )
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    handles = [
        Line2D([], [], label=look[v].label, **(look[v].handle_kwargs() | {"linestyle": "none"}))
        for v in variants
    ]
    if len(oracle):
        handles.append(Line2D([], [], label="oracle i*_t", **REFERENCE_STYLES["oracle"]))
    outside_legend(fig, handles)
    return fig


def learning_figure(
    curve: pd.DataFrame, common: CommonCVAEParams, variants: Sequence[str], oracle_info: float,
    headline: float, additive: Sequence[str] = (), over: str = "seeds", tier: str = "",
    same_as: Mapping[str, str] = {}, group: Sequence[str] = (),
) -> Figure:  # fmt: skip
    """Validation I^θ (the mean `over` seeds, or over the confirming tier's replicates, when
    there are several) against the step, per variant, at the headline rate, with the oracle's
    mean I* as a reference line and the plateau rule's window shaded; `tier` names the runs in
    the title; `same_as` as in `styles`; the axis set by the `group`, every curve whose last
    value lies within Tukey's fences of the last values, and the values within Tukey's fences
    (`fit_axis`)."""
    steps, window = common.steps, plateau_window(common)
    means = mean_curves(validated(curve, common.val_every, steps))
    look = styles(variants, additive, same_as)
    fig, (ax,) = new_figure((9.0, 5.4))
    values = {}
    for name in (v for v in variants if v in means.columns):
        look[name].plot(ax, means.index, means[name], linewidth=1.5, label=look[name].label)
        values[name] = list(zip(means.index, means[name], strict=True))
    keep = []
    if math.isfinite(oracle_info):
        ax.axhline(oracle_info, **REFERENCE_STYLES["oracle"], label="oracle I*")
        keep.append(oracle_info)
    ax.axvspan(window[0] * steps, window[1] * steps, color="grey", alpha=0.08)
    # a curve is far from the rest when its last value is: the others' every step stays in view
    inside = inliers({v: points[-1][1] for v, points in values.items() if points})
    fit_axis(ax, values, look, keep, [*group, *inside])
    unit = over[:-1] if over.endswith("s") else over
    variant = curve["series"].str.rsplit("/", n=1).str[0]
    counts = curve.groupby(variant)["series"].nunique()
    runs = runs_phrase(counts[counts.index.isin(variants)], unit)
    shaded = window_name(window)
    ax.set(
        xlabel="training step",
        ylabel=f"validation I^θ (nats/seq, {runs})",
        title=f"{tier}Learning curves at C = {rate_label(headline)} (shaded: {shaded})",
    )
    handles = [handle(look[v]) for v in values]
    if math.isfinite(oracle_info):
        handles.append(Line2D([], [], label="oracle I*", **REFERENCE_STYLES["oracle"]))
    outside_legend(fig, handles)
    return fig


def save_png(fig: Figure, path: str | Path) -> None:
    """Write `fig` as PNG, atomically."""
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=DPI, metadata=PNG_METADATA)
