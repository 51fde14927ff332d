"""One look for every figure: a colour and a marker per variant keyed by its name (the same in
every figure and every example), the reference lines' styles, and the axis rule (an axis set by
the compared group; a value past it drawn as a labelled arrow at the edge)."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.colors import to_rgb
from matplotlib.lines import Line2D

from zgain.results.metrics import FRONTIER_PANELS, spec

COLOURS = (
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
    "#e377c2", "#17becf", "#bcbd22", "#000000", "#7f7f7f", "#aec7e8",
)  # fmt: skip
"""The colours (matplotlib's tab10, black, a light blue)."""
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">", "h", "p")
SPARE = (
    "#393b79", "#ad494a", "#637939", "#8c6d31", "#7b4173", "#3182bd",
    "#e6550d", "#31a354", "#756bb1", "#d6616b", "#843c39", "#5254a3",
)  # fmt: skip
"""The colours a variant of no known family takes first (matplotlib's tab20b/tab20c, none of
the known variants' colours)."""
KNOWN = {
    "token_mean": ("#1f77b4", "o"),
    "token_sum": ("#d62728", "s"),
    "dist_normalized": ("#2ca02c", "^"),
    "example_inverse": ("#ff7f0e", "D"),
    "token_share": ("#9467bd", "v"),
    "token_share_cc": ("#8c564b", "P"),
    "token_inverse_cc": ("#e377c2", "X"),
    "mean_ex": ("#17becf", "*"),
    "mean_tok": ("#bcbd22", "<"),
    "mean_cc": ("#000000", ">"),
    "mean_inv": ("#7f7f7f", "h"),
}
"""The variants of params.yaml and the examples: colour and marker, fixed by name."""
ORACLE_COLOUR = "dimgrey"
REFERENCE_STYLES = {
    "oracle": {"color": ORACLE_COLOUR, "linestyle": ":", "linewidth": 1.8},
    "ceiling": {"color": ORACLE_COLOUR, "linestyle": (0, (6, 2, 1, 2, 1, 2)), "linewidth": 1.4},
    "floor": {"color": ORACLE_COLOUR, "linestyle": "-.", "linewidth": 1.4},
    "zero": {"color": "grey", "linestyle": "-", "linewidth": 0.8},
}
"""The reference lines: the oracle's I* (and capture 1) dotted, the Bayes ceiling dash-dot-dot,
the x-only floor dash-dotted, 0 thin solid."""
VERDICT_COLOURS = {
    "better": "#2ca02c",
    "worse": "#d62728",
    "equivalent": "#1f77b4",
    "undetermined": "#7f7f7f",
}


@dataclass(frozen=True)
class Style:
    colour: str
    marker: str
    linestyle: str
    label: str = ""  # the variant's legend entry
    hollow: bool = False  # drawn over the variant it equals: open markers, a thinner line

    def plot(self, ax: Axes, x: Sequence, y: Sequence, **kwargs) -> None:
        """A line in this style through (x, y), more of matplotlib's keywords in `kwargs`."""
        linestyle = kwargs.pop("linestyle", self.linestyle)
        if self.hollow and linestyle != "none":  # over its twin: open markers, short dashes
            kwargs |= {"markersize": max(kwargs.get("markersize", 6), 6) * 1.9}
            kwargs |= {"linewidth": 1.2, "markerfacecolor": "none", "markeredgewidth": 1.4}
            kwargs |= {"zorder": 4}
            linestyle = (0, (2, 3))
        elif self.hollow:
            kwargs |= {"markerfacecolor": "none", "markeredgewidth": 1.4}
        ax.plot(x, y, color=self.colour, marker=self.marker, linestyle=linestyle, **kwargs)

    def handle_kwargs(self) -> dict:
        """Line2D keywords for this style's legend entry."""
        if self.hollow:
            return {"color": self.colour, "marker": self.marker, "linestyle": (0, (2, 3)),
                    "markerfacecolor": "none"}  # fmt: skip
        return {"color": self.colour, "marker": self.marker, "linestyle": self.linestyle}


def slot_of(name: str, n: int) -> int:
    """A slot in 0..n-1 fixed by `name` alone (not Python's salted hash)."""
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big") % n


def family(name: str) -> str | None:
    """The known variant `name` extends (`mean_ex_l0p5` → `mean_ex`), the longest such."""
    parents = [k for k in KNOWN if name.startswith(k + "_")]
    return max(parents, key=len) if parents else None


def colour_marker(variants: Sequence[str]) -> dict[str, tuple[str, str]]:
    """(colour, marker) per variant: a known variant's own; one extending a known variant its
    colour and a marker fixed by its name; any other a spare colour and a marker fixed by its
    name. A slot taken (by a known variant or an earlier listed one) moves on to the next, so no
    two listed variants share both colour and marker."""
    taken = set(KNOWN.values())
    chosen = {v: KNOWN[v] for v in variants if v in KNOWN}
    spare = [(c, m) for m in MARKERS for c in SPARE]
    grid = spare + [(c, m) for m in MARKERS for c in COLOURS]
    for v in (v for v in variants if v not in KNOWN):
        parent = family(v)
        if parent is not None:
            colour = KNOWN[parent][0]
            options = [(colour, m) for m in MARKERS] + grid
            start = slot_of(v, len(MARKERS))
        else:
            options, start = grid, slot_of(v, len(spare))
        free = [o for o in options[start:] + options[:start] if o not in taken]
        chosen[v] = free[0] if free else options[start]
        taken.add(chosen[v])
    return {v: chosen[v] for v in variants}


def styles(
    variants: Sequence[str], additive: Sequence[str] = (), same_as: Mapping[str, str] = {}
) -> dict[str, Style]:
    """Each variant's Style: colour and marker by name (`colour_marker`), dashed for the
    `additive` variants, solid otherwise; a variant of `same_as` (its runs equal an earlier
    variant's) is drawn over that one with open markers and a thinner line, both visible, its
    legend entry naming the one it equals."""
    look = colour_marker(variants)
    return {
        v: Style(
            *look[v],
            "--" if v in additive else "-",
            f"{v} (identical to {same_as[v]})" if v in same_as else v,
            hollow=v in same_as,
        )
        for v in variants
    }


def colours(variants: Sequence[str]) -> dict[str, str]:
    """Each variant's colour (`colour_marker`)."""
    return {v: c for v, (c, _) in colour_marker(variants).items()}


def hatch_colour(face: str | tuple) -> str:
    """Black hatching on a light face, white on a dark one."""
    r, g, b = to_rgb(face)
    return "white" if 0.299 * r + 0.587 * g + 0.114 * b < 0.45 else "black"


WHISKER = 1.5  # Tukey's fences: the quartiles ± WHISKER · IQR
PAD = 0.06  # of the span, each side


def finite(values: Iterable[float]) -> np.ndarray:
    array = np.asarray([float(v) for v in values], dtype=float)
    return array[np.isfinite(array)]


def fences(values: Iterable[float]) -> tuple[float, float]:
    """Tukey's fences of the finite `values` ((-inf, inf) for fewer than 4), the IQR taken as at
    least a quarter of the |median|, so that a few close values do not fence off a near one."""
    array = finite(values)
    if len(array) < 4:
        return -math.inf, math.inf
    q1, median, q3 = np.percentile(array, [25, 50, 75])
    spread = max(q3 - q1, 0.25 * abs(median))
    return q1 - WHISKER * spread, q3 + WHISKER * spread


def inliers(centres: Mapping[str, float]) -> list[str]:
    """The names whose value lies within Tukey's fences of all the values (`fences`)."""
    low, high = fences(centres.values())
    return [name for name, value in centres.items() if low <= value <= high]


def group_limits(
    values: Iterable[float], keep: Iterable[float] = (), pad: float = PAD
) -> tuple[float, float]:
    """Axis limits set by the compared group: every value of `values` within Tukey's fences and
    every value of `keep` (the group named by the caller, references, intervals drawn) inside,
    padded by `pad` of the span; values past the fences are the caller's to mark at the edge."""
    array = finite(values)
    low, high = fences(array)
    inside = np.concatenate([array[(array >= low) & (array <= high)], finite(keep)])
    if not len(inside):
        return -1.0, 1.0
    lo, hi = float(inside.min()), float(inside.max())
    margin = (hi - lo) * pad or max(abs(hi), 1.0) * pad
    return lo - margin, hi + margin


def beyond(value: float, limits: tuple[float, float]) -> int:
    """-1 below the limits, 1 above, 0 inside (or not finite)."""
    if not math.isfinite(value):
        return 0
    return -1 if value < limits[0] else (1 if value > limits[1] else 0)


def edge_arrows(
    ax: Axes, outliers: Sequence[tuple[float, float, str, str]], axis: str = "y"
) -> None:
    """Each (position, value, label, colour) past the `axis` limits as an arrow at that edge,
    pointing out, its label (with the value) inside the axes; labels at the same edge stack."""
    limits = ax.get_ylim() if axis == "y" else ax.get_xlim()
    across = ax.get_xlim() if axis == "y" else ax.get_ylim()
    placed: list[tuple[int, float]] = []
    for position, value, label, colour in outliers:
        side = beyond(value, limits)
        if side == 0:
            continue
        edge = limits[0] if side < 0 else limits[1]
        where = (position - across[0]) / ((across[1] - across[0]) or 1.0)
        k = sum(1 for s, w in placed if s == side and abs(w - where) < 0.15)  # stack near ones
        placed.append((side, where))
        away = 20 + 11 * k
        text = f"{label} {value:+.2f}" if label else f"{value:+.2f}"
        if axis == "y":
            xy, offset = (position, edge), (0, -side * away)
            align = {"ha": "center", "va": "bottom" if side < 0 else "top"}
        else:
            xy, offset = (edge, position), (-side * away, 0)
            align = {"ha": "left" if side < 0 else "right", "va": "center"}
        ax.annotate(
            text, xy, xytext=offset, textcoords="offset points", fontsize=7, color=colour,
            arrowprops={"arrowstyle": "-|>", "color": colour, "lw": 1.0}, annotation_clip=False,
            bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.85},
            **align,
        )  # fmt: skip


def runs_phrase(counts: pd.Series, unit: str = "seed") -> str:
    """'one seed', 'mean over k seeds' or 'mean over j–k seeds' from the runs per cell."""
    counts = counts.dropna().astype(int)
    counts = counts[counts > 0]  # a metric the data lacks counts no runs
    if counts.empty:
        return ""
    low, high = int(counts.min()), int(counts.max())
    return seed_phrase(low, unit) if low == high else f"mean over {low}–{high} {unit}s"


def fit_axis(
    ax: Axes, values: Mapping[str, Sequence[tuple[float, ...]]], look: Mapping[str, Style],
    keep: Sequence[float] = (), group: Sequence[str] = (), named: bool = True,
) -> None:  # fmt: skip
    """The y axis set by the compared group: each variant's drawn points of `values` ((x, y),
    or (x, y, low, high) for a value drawn with its interval) within Tukey's fences of the y's,
    with the whole interval of each, every point of the `group` variants and every value of
    `keep` (references) inside, and then the whole interval of every value inside; each
    variant's farthest point past an edge is an arrow there labelled with its value (and the
    variant's name when `named`; `edge_arrows`)."""
    every = [p[1] for points in values.values() for p in points]
    low, high = fences(every)
    kept = [*keep]
    for variant, points in values.items():
        for p in points:
            if variant in group or low <= p[1] <= high:
                kept += [p[1], *p[2:]]
    limits = group_limits(every, kept)
    while True:  # a value shown is shown with its whole interval
        shown = [p for points in values.values() for p in points if not beyond(p[1], limits)]
        wider = group_limits(every, [*kept, *(y for p in shown for y in p[2:])])
        if wider == limits:
            break
        limits = wider
    ax.set_ylim(*limits)
    outliers = []
    for variant, points in values.items():
        for side in (-1, 1):
            past = [(p[0], p[1]) for p in points if beyond(p[1], limits) == side]
            if past:
                x, y = min(past, key=lambda p: side * -p[1])
                outliers.append((x, y, variant if named else "", look[variant].colour))
    edge_arrows(ax, outliers)


def pairs(x: Iterable[float], y: Iterable[float]) -> list[tuple[float, float]]:
    """The (x, y) points of two equally long sequences."""
    return list(zip(x, y, strict=True))


def seed_phrase(n: int, unit: str = "seed") -> str:
    """'one seed' or 'mean over k seeds' (an empty phrase for no runs)."""
    if n <= 0:
        return ""
    return f"one {unit}" if n == 1 else f"mean over {n} {unit}s"


def handle(st: Style) -> Line2D:
    """A variant's legend entry."""
    return Line2D([], [], label=st.label, **st.handle_kwargs())


def table_runs(table: pd.DataFrame, variants: Sequence[str]) -> str:
    """'one seed' or 'mean over k seeds' from the `n` of the variants' rows (empty without)."""
    if "n" not in table:
        return ""
    return runs_phrase(table.loc[table["variant"].isin(variants), "n"])


def bracket(text: str) -> str:
    return f" ({text.removeprefix('; ')})" if text else ""


def nesting(variant: str, group: Sequence[str]) -> dict:
    """Line width and marker size of a variant: within the `group` (where curves coincide) the
    first widest and largest, so that each later one is drawn inside the earlier ones and all
    stay visible; outside it the plain width and size."""
    if variant not in group:
        return {"linewidth": 1.3, "markersize": 5.0, "zorder": 2}
    i, n = group.index(variant), len(group)
    share = (n - 1 - i) / (n - 1) if n > 1 else 0.0
    return {"linewidth": 1.3 + 1.9 * share, "markersize": 5.0 + 5.0 * share, "zorder": 2 + i / n}


AXIS_LABELS = {key: str(spec(key).axis) for key in FRONTIER_PANELS}
"""Each plotted metric's axis label, with its unit (the sweep report's figures use them too)."""
REFERENCES = {
    "z_information": ("oracle", "oracle I* = {:.3f}"),
    "capture": ("oracle", "capture 1 (I^θ = I*)"),
    "probe_accuracy": ("ceiling", "Bayes ceiling = {:.3f}"),
    "probe_floor": ("floor", "x-only floor = {:.3f}"),
}
"""The frontier panels' reference lines: style (REFERENCE_STYLES) and legend entry."""
