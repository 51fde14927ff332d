"""The forest plots: each comparison's difference with its interval, coloured by its verdict,
the ±δ band of equivalence shaded, on an axis no outlier sets."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from zgain.report.figures import VERDICT_COLOURS, new_figure, outside_legend

BAND_REACH, MEAN_REACH = 4.0, 1.5
"""A forest's axis reaches BAND_REACH·δ or MEAN_REACH times the upper quartile of the |means|,
whichever is more, each side of 0; an interval past it is cut at the edge with an arrow and a
mean past it is drawn at the edge with its value, so no outlier squeezes the band of
equivalence and the comparisons that matter onto 0."""


def forest_limits(means: Sequence[float], delta: float) -> tuple[float, float]:
    """(low, high) of a forest panel (BAND_REACH, MEAN_REACH)."""
    finite = sorted(abs(m) for m in means if math.isfinite(m))
    quartile = finite[(3 * (len(finite) - 1)) // 4] if finite else 0.0
    reach = max(BAND_REACH * delta, MEAN_REACH * quartile) or 1.0
    return -reach, reach


def forest_row(ax: Axes, y: int, mean: float, low: float, high: float, colour: str) -> None:
    """One comparison: its interval cut to the axis (an arrow where it goes on) and its mean
    (at the edge, with its value, when it lies past it)."""
    left, right = ax.get_xlim()
    if math.isfinite(low) and math.isfinite(high):
        ax.plot([max(low, left), min(high, right)], [y, y], color=colour, linewidth=2)
        for end, edge, marker in ((low, left, "<"), (high, right, ">")):
            if (end < edge) if marker == "<" else (end > edge):
                ax.plot(edge, y, marker, color=colour, markersize=7, clip_on=False)
    if not math.isfinite(mean):
        return
    shown = min(max(mean, left), right)
    ax.plot(shown, y, "o", color=colour, clip_on=False)
    if shown != mean:
        side = "left" if mean < left else "right"
        ax.annotate(
            f"{mean:+.2f}", (shown, y), textcoords="offset points", xytext=(0, 6),
            ha=side, fontsize=8, color=colour,
        )  # fmt: skip


def forest_panel(ax: Axes, rows: pd.DataFrame, delta: float, mean: str, title: str) -> None:
    """Rows (a, b, `mean`, low, high, verdict) as a forest on `ax`, ±δ shaded."""
    ax.set_xlim(*forest_limits(rows[mean].tolist(), delta))
    ax.axvspan(-delta, delta, color="#1f77b4", alpha=0.12, linewidth=0)
    ax.axvline(0.0, color="grey", linewidth=0.8)
    for y, row in rows.reset_index(drop=True).iterrows():
        colour = VERDICT_COLOURS[row["verdict"]]
        forest_row(ax, int(y), row[mean], row["low"], row["high"], colour)
    ax.invert_yaxis()
    ax.grid(alpha=0.3, axis="x")
    ax.set_title(title)


Panel = tuple[str, str, pd.DataFrame, float]
"""One forest panel: its title, its x label, its rows (a, b, mean, low, high, verdict), δ."""


def forest_panels(
    panels: Sequence[Panel], mean: str, size: tuple[float, int], first: bool
) -> Figure:
    """Forest panels side by side, one verdict legend; size = (inches a panel, rows the height
    is for); `first`: the comparisons named on the first panel only."""
    width, rows = size
    size = (width * len(panels) + 2.5, 0.32 * rows + 1.8)
    fig, axes = new_figure(size, len(panels), grid=False)
    for i, (ax, (title, xlabel, table, delta)) in enumerate(zip(axes, panels, strict=True)):
        forest_panel(ax, table, delta, mean, title)
        labels = [f"{a} − {b}" for a, b in zip(table["a"], table["b"], strict=True)]
        ax.set_yticks(range(len(table)), labels if i == 0 or not first else [""] * len(table))
        ax.set_xlabel(xlabel)
    handles = [Line2D([], [], color=c, marker="o", label=v) for v, c in VERDICT_COLOURS.items()]
    handles.append(Line2D([], [], color="grey", marker=">", linestyle="", label="goes on"))
    handles.append(Patch(color="#1f77b4", alpha=0.12, label="±δ (equivalence)"))
    outside_legend(fig, handles, title="verdict")
    return fig


def forest_figure(verdicts: pd.DataFrame, metric: str, label: str) -> Figure:
    """One panel per target rate: each declared comparison's Δ `metric` (a − b) with its
    interval (tables/verdicts.csv: at report.confidence), coloured by its verdict, and the ±δ
    band of equivalence shaded; the axis set by δ and the means (`forest_limits`)."""
    panels = []
    for rate in sorted(set(verdicts["rate"])):
        rows = verdicts[(verdicts["rate"] == rate) & (verdicts["metric"] == metric)]
        delta = float(rows["delta"].iloc[0]) if len(rows) else 0.0
        panels.append((f"C = {rate:g}", f"Δ {label} (a − b)", rows.reset_index(drop=True), delta))
    return forest_panels(panels, "mean_diff", (4.0, 12), first=True)


def bases_forest_figure(procedure: pd.DataFrame, deltas: Mapping[str, float]) -> Figure:
    """The claims over bases (tables/procedure.csv): one panel per metric and rate, each
    comparison's mean difference over the confirming bases with its interval, coloured by its
    verdict, ±δ shaded; the axis set by δ and the means (`forest_limits`)."""
    panels = []
    for metric, rate in dict.fromkeys(zip(procedure["metric"], procedure["rate"], strict=True)):
        rows = procedure[(procedure["metric"] == metric) & (procedure["rate"] == rate)]
        title, xlabel = f"{metric}, C = {rate:g}", f"Δ {metric} (a − b), over bases"
        panels.append((title, xlabel, rows, deltas[metric]))
    tallest = max(len(table) for _, _, table, _ in panels)
    return forest_panels(panels, "mean", (4.2, tallest), first=False)


def forest_figures(
    verdicts: pd.DataFrame,
    test_metric: str,
    procedure: pd.DataFrame | None,
    deltas: Mapping[str, float],
) -> dict[str, Figure]:
    """forest.png, the screening verdicts on `test_metric` (left out when no screening
    difference exists: one seed), and forest_bases.png, the claims over bases (given a
    `procedure` table)."""
    label = "capture" if test_metric == "capture" else "I^θ (nats/seq)"
    figures = {}
    if verdicts["mean_diff"].notna().any():
        figures["forest.png"] = forest_figure(verdicts, test_metric, label)
    if procedure is not None and len(procedure):
        figures["forest_bases.png"] = bases_forest_figure(procedure, deltas)
    return figures
