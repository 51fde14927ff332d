"""The report's set of figures by file name, drawn by zgain.figures from the context's finished
tables: the frontier, the top group's frontier, the forests, the decomposition and the positions."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from matplotlib.figure import Figure

from zgain.figures.draw import decomposition_figure, frontier_figure, information_by_position_figure
from zgain.figures.style import styles
from zgain.report.context import Context
from zgain.results.analysis.tables import DECOMPOSITION
from zgain.results.frontier import FRONTIER_METRICS
from zgain.results.load.runs import per_run
from zgain.results.registry import FRONTIER, POSITIONS


def build_figures(
    ctx: Context,
    forests: Mapping[str, Figure],
    top: Sequence[str],
    additive: Sequence[str],
    same_as: Mapping[str, str] = {},
) -> dict[str, Figure]:
    """Every figure of the report by file name: the frontier, the `top` group's frontier on its
    own scale, the `forests` (zgain.figures.forest.forest_figures), the headline rate's
    decomposition and positions; `additive`: the variants drawn dashed; `same_as` as in
    `styles`. Every axis is set by the `top` group and the values within Tukey's fences."""
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
        "frontier.png": frontier_figure(
            points, frontier, variants, references, panels, look, group=top
        )
    }
    if top and len(top) < len(variants):
        figures["frontier_top.png"] = frontier_figure(
            points[points["variant"].isin(top)], frontier, list(top), references, panels, look,
            title=f"The top group alone: {', '.join(top)}", group=top,
        )  # fmt: skip
    figures |= forests
    figures["gain_decomposition.png"] = decomposition_figure(
        ctx.tables[DECOMPOSITION.name], variants, coverage.oracle, look, top
    )
    figures["information_by_position.png"] = information_by_position_figure(
        ctx.tables[POSITIONS.name], variants, look, top
    )
    return figures
