"""The summary and its views lose nothing of the one-file summary they replace: every table row
of old_layout/<study>.md (the summary.md the one-file layout wrote for these fake studies)
appears, label and numbers, in the new summary.md, details.md or diagnostics.md
(nothing_lost.py; on a real run: `python tests/report/nothing_lost.py OLD_SUMMARY.md REPORTS`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from nothing_lost import VIEWS, missing_rows, table_rows
from report_fakes import build

OLD = Path(__file__).with_name("old_layout")
STUDIES = {"seeds3": {}, "bases4": {"bases": (0, 1, 2, 3)}, "seed1": {"seeds": (0,)}}


@pytest.mark.parametrize("study", sorted(STUDIES))
def test_every_table_row_of_the_old_summary_is_in_the_summary_or_a_view(
    tmp_path: Path, study: str
) -> None:
    params = build(tmp_path, **STUDIES[study])
    reports = Path(params.paths.reports_dir)
    texts = [(reports / name).read_text() for name in VIEWS]
    old = (OLD / f"{study}.md").read_text()
    assert len(table_rows(old)) > 40
    assert missing_rows(old, texts) == []
    assert len(texts[0].splitlines()) <= 200  # the summary stays short


def test_a_lost_row_is_found() -> None:
    old = "| row | a |\n|---|---|\n| x | 1.000 [0.5, 1.5] |\n| y | 2.000 |\n"
    assert missing_rows(old, ["| row | a | b |\n| x | 9 | 1.000 [0.5, 1.5] |\n"]) == [
        ("y", ("2.000",))
    ]
