"""zgain.report.render.markdown: the one Markdown table renderer and the docs' term table."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from zgain.cvae.terms import TERMS, formula
from zgain.report.render.markdown import frame_table, markdown_table, terms_table

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_a_table_has_header_rule_and_rows_with_pipes_escaped() -> None:
    assert markdown_table(["a", "b"], [["1", "x|y"]]) == "| a | b |\n|---|---|\n| 1 | x\\|y |"


def test_a_frame_prints_floats_to_the_digits_and_nan_as_n_a() -> None:
    frame = pd.DataFrame({"variant": ["token_mean", "token_sum"], "capture": [0.71234, math.nan]})
    assert frame_table(frame, digits=2).splitlines() == [
        "| variant | capture |",
        "|---|---|",
        "| token_mean | 0.71 |",
        "| token_sum | n/a |",
    ]


def test_the_term_table_has_one_row_per_registered_term() -> None:
    table = terms_table().splitlines()
    assert len(table) == 2 + len(TERMS)
    assert table[2] == f"| `mean` | {formula('mean')} |"


def test_the_usage_docs_table_is_the_registry_table() -> None:
    assert terms_table() in (DOCS / "usage.md").read_text()
