"""Markdown tables: one renderer for the report, the sweep reports and the docs' term table."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd

from zgain.cvae.terms import TERMS, formula


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A GitHub-flavoured Markdown table; a `|` inside a cell is escaped."""

    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    return "\n".join([line(header), "|" + "---|" * len(header), *map(line, rows)])


def frame_table(frame: pd.DataFrame, digits: int = 3) -> str:
    """`frame` as a Markdown table, floats to `digits` places (NaN as n/a)."""

    def text(value: object) -> str:
        if isinstance(value, float):
            return "n/a" if math.isnan(value) else f"{value:.{digits}f}"
        return str(value)

    rows = [[text(v) for v in row] for row in frame.itertuples(index=False)]
    return markdown_table([str(c) for c in frame.columns], rows)


def terms_table() -> str:
    """The term table of the docs: one row per registered term, weight key and formula."""
    return markdown_table(["weight key", "term"], [[f"`{name}`", formula(name)] for name in TERMS])
