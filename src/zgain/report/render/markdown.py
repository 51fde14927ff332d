"""The Markdown of every report: number and interval cells, metric labels, tables, captions."""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable, Hashable, Mapping, Sequence

import pandas as pd

from zgain.cvae.terms import TERMS, formula
from zgain.results.metrics import METRICS
from zgain.stats.intervals import Interval
from zgain.stats.rule import BETTER, EQUIVALENT, UNDETERMINED, WORSE, tost_level

DIGITS = 3
NA = "n/a"  # an undefined value
NOT_APPLICABLE = "—"  # a column a reference row does not have
NOT_SEPARABLE = "not separable"  # σ_B and σ_W with one seed per base
LABELS = {key: spec.symbol for key, spec in METRICS.items() if spec.symbol}
"""The one label of each metric that prose and headers name by symbol (its MetricSpec's)."""
MARKS = {BETTER: "▲", WORSE: "▼", EQUIVALENT: "≈", UNDETERMINED: "?"}
"""The one mark of each verdict."""


def fmt(value: float, digits: int = DIGITS, *, signed: bool = False) -> str:
    """A number with `digits` decimals (`+` when signed), `n/a` when undefined."""
    if not math.isfinite(value):
        return NA
    return f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"


def bracket(low: float, high: float, *, signed: bool = False) -> str:
    """`[low, high]`: the one way an interval is written."""
    return f"[{fmt(low, signed=signed)}, {fmt(high, signed=signed)}]"


def fmt_stats(row: Mapping, *, signed: bool = False) -> str:
    """`mean [low, high]` when the row has an interval, the mean alone otherwise."""
    text = fmt(row["mean"], signed=signed)
    if Interval.of(row).has_interval:
        text += " " + bracket(row["low"], row["high"], signed=signed)
    return text


def percent(level: float) -> str:
    """0.95 -> '95%', 0.975 -> '97.5%'."""
    return f"{level * 100:g}%"


def method_label(n_seeds: int, confidence: float) -> str:
    """How every cell over seeds was computed, for table and figure captions."""
    if n_seeds == 1:
        return "one seed: the value of that seed, no interval (one seed has no spread)"
    return f"mean over {n_seeds} seeds, {percent(confidence)} t-interval"


def legend(confidence: float) -> str:
    """The verdict marks, with the level of the TOST interval behind ≈ (1 − 2α)."""
    tost = percent(tost_level(confidence))
    return f"▲ better ▼ worse ≈ equivalent ({tost} interval) ? undetermined"


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def listing(items: Sequence[str], *, serial: bool = False) -> str:
    """`a`, `a and b`, `a, b and c` (`a, b, and c` when `serial`)."""
    if len(items) < 3:
        return " and ".join(items)
    return ", ".join(items[:-1]) + ("," if serial else "") + " and " + items[-1]


def caption(title: str, method: str = "", note: str = "", key: str = "") -> str:
    """A table's caption, numbered by `number_tables` once the document is whole; `key` names
    it for a later `Table ⟦key⟧`."""
    method = f"; {method}" if method else ""
    return f"*Table ⟦{key}⟧. {title}{method}.*" + (f" {note}" if note else "")


def blocks(*parts: str) -> list[str]:
    """The lines of the paragraphs `parts` (empty ones left out), a blank line between two."""
    return "\n\n".join(part for part in parts if part).split("\n")


def number_tables(text: str) -> str:
    """The tables numbered in the order their captions appear, each `Table ⟦key⟧` by the number
    of the caption with that key."""
    count, named = itertools.count(1), {}

    def number(match: re.Match) -> str:
        if not match[1]:
            return f"Table {named[match[2]]}"
        named[match[2] or None] = n = next(count)
        return f"*Table {n}"

    return re.sub(r"(\*?)Table ⟦(\w*)⟧", number, text)


def column_header(metric: str) -> str:
    """`metric` in code, with its label when it has one of its own."""
    label = LABELS.get(metric, metric)
    return f"`{metric}` ({label})" if label != metric else f"`{metric}`"


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A GitHub-flavoured Markdown table; a `|` inside a cell is escaped."""

    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    return "\n".join([line(header), "|" + "---|" * len(header), *map(line, rows)])


def frame_table(frame: pd.DataFrame, digits: int = 3) -> str:
    """`frame` as a Markdown table, floats to `digits` places (NaN as n/a)."""

    def text(value: object) -> str:
        if isinstance(value, float):
            return NA if math.isnan(value) else f"{value:.{digits}f}"
        return str(value)

    rows = [[text(v) for v in row] for row in frame.itertuples(index=False)]
    return markdown_table([str(c) for c in frame.columns], rows)


def pivot(
    table: pd.DataFrame,
    index: str | Sequence[str],
    column: str,
    text: Callable[[Mapping], str],
    columns: Sequence | None = None,
    missing: str = NA,
    label: Callable[[Hashable], str] = str,
) -> list[list[str]]:
    """The one long-to-wide step: one row per distinct `index` value (a tuple for several
    columns), first seen first, headed by label(value), then one cell per `columns` value
    (default: the distinct `column` values, first seen first) holding text(row), `missing`
    where the table has no row."""

    def key(row: Mapping) -> Hashable:
        return row[index] if isinstance(index, str) else tuple(row[i] for i in index)

    records = table.to_dict("records")  # each column keeps its type (an int stays an int)
    cells = {(key(r), r[column]): text(r) for r in records}
    keys = dict.fromkeys(key(r) for r in records)
    columns = list(dict.fromkeys(table[column])) if columns is None else columns
    return [[label(k), *(cells.get((k, c), missing) for c in columns)] for k in keys]


def sigma_cell(sigma: float, upper: float) -> str:
    """`0.012 (≤ 0.041)`: a σ with its upper bound; a σ clipped at 0 as `0`, never 0.000."""
    if not math.isfinite(sigma):
        return fmt(sigma)
    text = "0" if sigma == 0.0 else fmt(sigma)
    return f"{text} (≤ {fmt(upper)})" if math.isfinite(upper) else text


def sigma_cells(row: Mapping) -> tuple[str, str]:
    """(σ_B, σ_W) cells of one comparison over bases; NOT_SEPARABLE with one seed per base (σ_W
    undefined while σ_B is: bases ≥ 2)."""
    if not math.isfinite(row["sigma_w"]) and math.isfinite(row["sigma_b"]):
        return NOT_SEPARABLE, NOT_SEPARABLE
    return (
        sigma_cell(row["sigma_b"], row["sigma_b_upper"]),
        sigma_cell(row["sigma_w"], row["sigma_w_upper"]),
    )


def terms_table() -> str:
    """The term table of the docs: one row per registered term, weight key and formula."""
    return markdown_table(["weight key", "term"], [[f"`{name}`", formula(name)] for name in TERMS])
