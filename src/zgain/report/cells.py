"""A long table's Markdown: one row per label, one cell per metric, seed cells as
`mean [low, high]` (docs/method.md#uncertainty-over-seeds)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

import pandas as pd

from zgain.report.commentary import fmt, fmt_stats
from zgain.report.markdown import markdown_table
from zgain.report.sections import NOT_APPLICABLE, column_header
from zgain.report.tables import SEEDS, TableSpec

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
    cells = {(r["variant"], r["metric"]): cell_text(r, n_seeds) for _, r in table.iterrows()}
    labels = list(dict.fromkeys(table["variant"]))
    rows = [
        [label] + [cells.get((label, m), NOT_APPLICABLE) for m in spec.columns] for label in labels
    ]
    return markdown_table(["row", *map(header, spec.columns)], rows)


NOT_SEPARABLE = "not separable"
"""σ_B and σ_W with one seed per base: the design cannot tell them apart."""


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
