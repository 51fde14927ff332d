"""The forest plots: each comparison's difference with its interval, coloured by its verdict,
the ±δ band of equivalence shaded, on one axis per metric that every interval drawn fits in; a
comparison far from the rest (past Tukey's fences of the differences) is an arrow at the edge
labelled with its difference and interval."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator

from zgain.figures.draw import new_figure, outside_legend
from zgain.figures.style import VERDICT_COLOURS, beyond, fences, finite

BAND_COLOUR, BAND_ALPHA = "#1f77b4", 0.12
BAND_REACH, PAD = 1.5, 0.08
"""A forest's axis holds ±BAND_REACH·δ and every interval and difference within Tukey's fences
of the differences, padded by PAD of its span each side."""


def forest_limits(rows: Sequence[pd.DataFrame], mean: str, delta: float) -> tuple[float, float]:
    """(low, high) shared by the panels of one metric: ±BAND_REACH·δ, 0, and the difference and
    interval of each row whose difference lies within Tukey's fences of all the differences."""
    table = pd.concat(list(rows), ignore_index=True)
    low, high = fences(table[mean])
    inside = table[(table[mean] >= low) & (table[mean] <= high)]
    values = finite([*inside[mean], *inside["low"], *inside["high"]])
    lo = min([-BAND_REACH * delta, 0.0, *values])
    hi = max([BAND_REACH * delta, 0.0, *values])
    margin = (hi - lo) * PAD or 1.0
    return lo - margin, hi + margin


def forest_row(ax: Axes, y: int, mean: float, low: float, high: float, colour: str) -> bool:
    """One comparison: its interval and its difference, or, for a difference past the axis, an
    arrow at that edge labelled with the difference and interval inside the axes; True for the
    arrow."""
    limits = ax.get_xlim()
    side = beyond(mean, limits)
    interval = math.isfinite(low) and math.isfinite(high)
    if side == 0:
        if interval:
            ax.plot([low, high], [y, y], color=colour, linewidth=2)
        if math.isfinite(mean):
            ax.plot(mean, y, "o", color=colour)
        return False
    text = f"{mean:+.2f}" + (f" [{low:+.2f}, {high:+.2f}]" if interval else "")
    edge = limits[0] if side < 0 else limits[1]
    ax.annotate(
        text, (edge, y), xytext=(-side * 22, 0), textcoords="offset points", va="center",
        ha="left" if side < 0 else "right", fontsize=8, color=colour, annotation_clip=False,
        arrowprops={"arrowstyle": "-|>", "color": colour, "lw": 1.5},
    )  # fmt: skip
    return True


def forest_panel(
    ax: Axes, rows: pd.DataFrame, delta: float, mean: str, title: str, limits: tuple[float, float]
) -> bool:
    """Rows (a, b, `mean`, low, high, verdict) as a forest on `ax` within `limits`, ±δ shaded;
    True when a difference lies past the axis."""
    ax.set_xlim(*limits)
    ax.axvspan(-delta, delta, color=BAND_COLOUR, alpha=BAND_ALPHA, linewidth=0)
    ax.axvline(0.0, color="grey", linewidth=0.8)
    past = False
    for y, row in rows.reset_index(drop=True).iterrows():
        colour = VERDICT_COLOURS[row["verdict"]]
        past |= forest_row(ax, int(y), row[mean], row["low"], row["high"], colour)
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.xaxis.set_major_locator(MaxNLocator(nbins=5))
    ax.grid(alpha=0.3, axis="x")
    ax.set_title(title)
    return past


Panel = tuple[str, str, pd.DataFrame, float]
"""One forest panel: its title, its x label, its rows (a, b, mean, low, high, verdict), δ."""


def forest_panels(
    panels: Sequence[Panel], mean: str, size: tuple[float, int], first: bool, title: str
) -> Figure:
    """Forest panels side by side, one axis per x label (metric), one legend of the verdicts
    drawn, `title` above; size = (inches a panel, rows the height is for); `first`: the
    comparisons named on the first panel only."""
    width, rows = size
    size = (width * len(panels) + 2.5, 0.32 * rows + 2.6)
    fig, axes = new_figure(size, len(panels), grid=False)
    limits = {
        xlabel: forest_limits([t for _, x, t, _ in panels if x == xlabel], mean, delta)
        for _, xlabel, _, delta in panels
    }
    past, intervals, verdicts = False, False, set()
    for i, (ax, (name, xlabel, table, delta)) in enumerate(zip(axes, panels, strict=True)):
        past |= forest_panel(ax, table, delta, mean, name, limits[xlabel])
        intervals |= bool(table["low"].notna().any())
        verdicts |= set(table["verdict"])
        labels = [f"{a} − {b}" for a, b in zip(table["a"], table["b"], strict=True)]
        ax.set_yticks(range(len(table)), labels if i == 0 or not first else [""] * len(table))
        ax.set_xlabel(xlabel)
    handles = [
        Line2D([], [], color=c, marker="o", label=v if intervals else f"{v} (no interval)")
        for v, c in VERDICT_COLOURS.items()
        if v in verdicts
    ]
    if past:
        handles.append(
            Line2D([], [], color="grey", marker=">", linestyle="", label="past the axis (value)")
        )
    handles.append(Patch(color=BAND_COLOUR, alpha=BAND_ALPHA, label="±δ (equivalence)"))
    outside_legend(fig, handles, title="verdict")
    fig.suptitle(title.replace(" (", "\n(", 1) if len(panels) == 1 else title)  # fits one panel
    return fig


def pairs_phrase(rows: pd.DataFrame, unit: str) -> str:
    """'one seed: no interval', or 'intervals over k seeds' from the `n` column."""
    counts = sorted({int(n) for n in rows["n"].dropna()}) if "n" in rows else []
    if not counts:
        return ""
    if counts == [1]:
        return f"one {unit}: no interval"
    k = f"{counts[0]}" if len(counts) == 1 else f"{counts[0]}–{counts[-1]}"
    return f"intervals over {k} {unit}s"


def forest_figure(verdicts: pd.DataFrame, metric: str, label: str) -> Figure:
    """One panel per target rate: each declared comparison's Δ `metric` (a − b) with its
    interval (tables/verdicts.csv: at report.confidence), coloured by its verdict, and the ±δ
    band of equivalence shaded; one axis for every rate (`forest_limits`)."""
    panels = []
    chosen = verdicts[verdicts["metric"] == metric]
    for rate in sorted(set(verdicts["rate"])):
        rows = chosen[chosen["rate"] == rate]
        delta = float(rows["delta"].iloc[0]) if len(rows) else 0.0
        panels.append((f"C = {rate:g}", f"Δ {label} (a − b)", rows.reset_index(drop=True), delta))
    title = f"Screening comparisons: Δ {label} at each target rate ({pairs_phrase(chosen, 'seed')})"
    return forest_panels(panels, "mean_diff", (4.0, 12), first=True, title=title)


def bases_forest_figure(procedure: pd.DataFrame, deltas: Mapping[str, float]) -> Figure:
    """The claims over bases (tables/procedure.csv): one panel per metric and rate, each
    comparison's mean difference over the confirming bases with its interval, coloured by its
    verdict, ±δ shaded; one axis per metric (`forest_limits`)."""
    panels = []
    for metric, rate in dict.fromkeys(zip(procedure["metric"], procedure["rate"], strict=True)):
        rows = procedure[(procedure["metric"] == metric) & (procedure["rate"] == rate)]
        title, xlabel = f"{metric}, C = {rate:g}", f"Δ {metric} (a − b), over bases"
        panels.append((title, xlabel, rows.reset_index(drop=True), deltas[metric]))
    tallest = max(len(table) for _, _, table, _ in panels)
    title = f"Claims over bases: mean difference ({pairs_phrase(procedure, 'base')})"
    return forest_panels(panels, "mean", (4.2, tallest), first=False, title=title)


def forest_figures(
    verdicts: pd.DataFrame,
    test_metric: str,
    procedure: pd.DataFrame | None,
    deltas: Mapping[str, float],
) -> dict[str, Figure]:
    """forest.png, the screening verdicts on `test_metric` (left out when no screening
    difference exists), and forest_bases.png, the claims over bases (given a `procedure`
    table)."""
    label = "capture" if test_metric == "capture" else "I^θ (nats/seq)"
    figures = {}
    if verdicts["mean_diff"].notna().any():
        figures["forest.png"] = forest_figure(verdicts, test_metric, label)
    if procedure is not None and len(procedure):
        figures["forest_bases.png"] = bases_forest_figure(procedure, deltas)
    return figures
