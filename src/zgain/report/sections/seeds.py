"""The tables over seeds in the summary and its details view: the decomposition at the headline
rate and at every other rate (each with its damage check), the headline rate's other seed tables
and the z-information by strategy, and the seed tables' cells, with the decomposition's columns
adjusted to exactly C. It computes nothing: every section reads the Context's tables.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

import pandas as pd

from zgain.core.runs import rate_label
from zgain.report.context import Context
from zgain.report.render.glossary import GLOSSARY
from zgain.report.render.markdown import (
    NOT_APPLICABLE,
    caption,
    column_header,
    fmt,
    fmt_stats,
    markdown_table,
    pivot,
)
from zgain.report.sections.checks import (
    damage_sentences,
)
from zgain.results.analysis.adjust import ADJUSTED_METRICS, ADJUSTED_PREFIX
from zgain.results.analysis.tables import (
    DECOMPOSITION,
    PAIRED_MEASURES,
    SEED_TABLES,
    SEEDS,
    TableSpec,
    decomposition_name,
)
from zgain.results.registry import STRATEGIES

AT_RATE = "@C"  # suffix of a column adjusted to exactly the target rate
ADJUSTMENT_NOTE = (
    "Columns *at C*: each seed's value adjusted to exactly KL = C along its variant's frontier, "
    "m_s + slope · (C − kl_s), the slope dm/dKL from the seed means at the neighbouring target "
    "rates (central difference, one-sided at the grid's ends; tables/adjustment.csv), so the "
    "spread of the achieved KL leaves the interval (docs/method.md#exact-rate-adjustment)."
)
NO_ADJUSTMENT_NOTE = (
    "Columns *at C*: with one target rate there is no frontier to follow, so they equal the raw "
    "values (not adjusted)."
)
FIGURE_METRICS = ("token_z_information", "oracle_token_info", "oracle_info", "val_z_information")


def glossary_names() -> list[str]:
    """Every metric a table column, a reference cell, a caption or a figure names."""
    named = {m for spec in SEED_TABLES for m in spec.columns}
    named |= {
        source
        for spec in SEED_TABLES
        for reference in (*spec.before, *spec.after)
        for source in reference.cells.values()
        if isinstance(source, str)
    }
    named |= {*PAIRED_MEASURES, *FIGURE_METRICS, "revealed_token_share", "net_gain"}
    return [name for name in GLOSSARY if name in named]


def rate_sections(ctx: Context, rates: Sequence[float]) -> list[str]:
    """The next tables: one decomposition table per rate of `rates`, each with its damage check;
    the first carries the table's note, the others refer to it."""
    decomposition = ctx.coverage.decomposition
    lines = []
    note = ADJUSTMENT_NOTE if len(ctx.by_rate) > 1 else NO_ADJUSTMENT_NOTE
    for i, rate in enumerate(rates):
        table = ctx.tables[decomposition_name(rate)]
        title = f"{DECOMPOSITION.title} at target rate C = {rate_label(rate)}"
        title += " (headline)" if rate == ctx.headline else ""
        if i == 0:
            text = caption(title, ctx.method, f"{decomposition.note} {note}", DECOMPOSITION.name)
        else:
            text = caption(title, ctx.method, f"Rows and columns as Table ⟦{DECOMPOSITION.name}⟧.")
        spec, cells = with_adjusted_cells(decomposition, table)
        shown = render_table(spec, cells, ctx.n_seeds, header=at_rate_header)
        lines += ["", f"### {title}", "", text, "", shown, ""]
        lines += [f"- {line}" for line in damage_sentences(ctx.damage[rate])]
        lines.append("")
    return lines


def strategy_spec(transforms: Sequence[str]) -> TableSpec:
    """The by-strategy table: one column per hidden strategy, in data.transforms order."""
    return TableSpec(
        name=STRATEGIES.name,
        title="Z-information by hidden strategy (nats per sequence)",
        columns=tuple(transforms),
        note="Each cell is the mean I^θ = M − L over the test examples drawn with that "
        "strategy; `oracle`: the oracle's I* on the same examples, so a variant's cell over "
        "the oracle's is its capture of that strategy.",
    )


def headline_tables(ctx: Context, names: Sequence[str]) -> list[str]:
    """The next tables: the headline rate's seed tables named in `names` that the data allows
    (report order), and the z-information by strategy when `names` holds it."""
    at = f" at the headline rate C = {rate_label(ctx.headline)}"
    specs = [spec for spec in ctx.coverage.seed_tables() if spec.name in names]
    if STRATEGIES.name in names and ctx.coverage.strategies:
        specs.append(strategy_spec(ctx.coverage.strategies))
    lines = []
    for spec in specs:  # a strategy column is headed by the strategy's name
        text = caption(spec.title + at, ctx.method, spec.note)
        lines += ["", f"## {spec.title}{at}", "", text, ""]
        header = str if spec.name == STRATEGIES.name else column_header
        lines.append(render_table(spec, ctx.tables[spec.name], ctx.n_seeds, header=header))
    return lines


def at_rate_header(metric: str) -> str:
    """Column header; an adjusted column `m@C` reads "`m` at C"."""
    if metric.endswith(AT_RATE):
        return column_header(metric.removesuffix(AT_RATE)) + " at C"
    return column_header(metric)


def with_adjusted_cells(spec: TableSpec, table: pd.DataFrame) -> tuple[TableSpec, pd.DataFrame]:
    """The decomposition's spec and long table with a column `m@C` after each adjusted metric m,
    its cells read from the adjusted_mean/low/high columns."""
    extra = table[table["metric"].isin(ADJUSTED_METRICS) & (table["kind"] == SEEDS)].copy()
    extra["metric"] = extra["metric"] + AT_RATE
    for column in ("mean", "low", "high"):
        extra[column] = extra[ADJUSTED_PREFIX + column]
    columns = []
    for metric in spec.columns:
        columns += [metric, metric + AT_RATE] if metric in ADJUSTED_METRICS else [metric]
    return replace(spec, columns=tuple(columns)), pd.concat([table, extra], ignore_index=True)


INTEGER_METRICS = frozenset({"iw_samples", "latent_dim"})


def cell_text(row: Mapping, n_seeds: int) -> str:
    """A seed cell as `mean [low, high]` (`(n=k)` when k < n seeds define it); others as values."""
    if row["kind"] != SEEDS:
        return fmt(row["mean"], 0 if row["source"] in INTEGER_METRICS else 3)
    if row["n"] == 0:
        return fmt(math.nan)
    text = fmt(row["mean"], 0) if row["metric"] in INTEGER_METRICS else fmt_stats(row)
    return text + (f" (n={row['n']})" if row["n"] < n_seeds else "")


def render_table(
    spec: TableSpec,
    table: pd.DataFrame,
    n_seeds: int,
    header: Callable[[str], str] = column_header,
) -> str:
    """The Markdown of one long table: one row per label in order, one column per metric
    (headed by `header(metric)`)."""
    text = lambda r: cell_text(r, n_seeds)  # noqa: E731
    rows = pivot(table, "variant", "metric", text, spec.columns, NOT_APPLICABLE)
    return markdown_table(["row", *map(header, spec.columns)], rows)
