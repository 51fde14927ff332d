"""Numbers the README and docs/ quote come from the files that hold them.

A quoted number is written after a marker naming its source, `<!-- from PATH:SELECTOR -->VALUE`
(invisible once rendered):

- PATH a CSV file: SELECTOR is `FILTERS:COLUMN`, FILTERS `key=value` pairs joined by `,` that
  pick exactly one row (none: the file has one row), COLUMN the column read. COLUMN may also be
  `count` (the number of rows the filters pick) or `mean(c)`, `min(c)`, `max(c)` over them.
- PATH a JSON or YAML file: SELECTOR is the dotted key path of the value.

VALUE is a number (a leading −, - or + sign; the decimals written are the precision checked:
the source rounds to it) or a word (compared as text). Durations have their own marker
(`<!-- wall-time: NAME -->`, tests/test_docs.py).
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import REPO_ROOT

MARKER = re.compile(r"<!-- from ([^:\s]+):([^>]*?) -->([+\-−]?\d[\d,]*(?:\.\d+)?|[A-Za-z_]+)")
PAGES = [
    REPO_ROOT / "README.md",
    *sorted((REPO_ROOT / "docs").glob("*.md")),
    *sorted((REPO_ROOT / "studies").glob("*/README.md")),
]
# the pages whose current-state numbers must all be sourced: at least this many markers each
REQUIRED = {"README.md": 15, "docs/defaults.md": 3, "docs/usage.md": 2}


def source_value(path: Path, selector: str) -> object:
    """The value SELECTOR names in the file at `path` (module docstring)."""
    if path.suffix == ".csv":
        filters, _, column = selector.rpartition(":")
        table = pd.read_csv(path)
        for pair in filter(None, filters.split(",")):
            key, _, value = pair.partition("=")
            table = table[table[key].astype(str) == value]
        if column == "count":
            return len(table)
        folded = re.fullmatch(r"(mean|min|max)\((\w+)\)", column)
        if folded:
            return getattr(table[folded[2]].astype(float), folded[1])()
        assert len(table) == 1, f"{path.name}:{selector} picks {len(table)} rows"
        return table.iloc[0][column]
    node = (
        json.loads(path.read_text()) if path.suffix == ".json" else yaml.safe_load(path.read_text())
    )
    for key in selector.split("."):
        node = node[int(key)] if isinstance(node, list) else node[key]
    return node


def agrees(written: str, value: object) -> bool:
    """A written number equals the source rounded to the decimals written; a word, as text."""
    number = written.replace("−", "-").replace(",", "")
    if not re.fullmatch(r"[+\-]?\d+(?:\.\d+)?", number):
        return written == str(value)
    decimals = len(number.partition(".")[2])
    try:
        source = float(value)
    except (TypeError, ValueError):
        return False
    return (
        math.isfinite(source) and abs(round(source, decimals) - float(number)) < 10**-decimals / 2
    )


def quoted(page: Path) -> list[tuple[str, str, str]]:
    return MARKER.findall(page.read_text())


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(REPO_ROOT).as_posix())
def test_every_quoted_number_is_its_source(page: Path) -> None:
    wrong = []
    for path, selector, written in quoted(page):
        source = REPO_ROOT / path
        assert source.is_file(), f"{page.name}: no file {path}"
        value = source_value(source, selector)
        if not agrees(written, value):
            wrong.append(f"{path}:{selector} is {value!r}, the page says {written}")
    assert wrong == []


def test_the_front_page_and_the_current_state_docs_quote_through_markers() -> None:
    counts = {name: len(quoted(REPO_ROOT / name)) for name in REQUIRED}
    assert all(counts[name] >= least for name, least in REQUIRED.items()), counts


def test_a_marker_that_disagrees_with_its_source_is_found(tmp_path: Path) -> None:
    table = tmp_path / "t.csv"
    table.write_text("base,tier,x\n0,screening,0.11471\n1,confirming,0.2\n")
    assert source_value(table, "base=0:x") == pytest.approx(0.11471)
    assert source_value(table, "tier=confirming:count") == 1
    assert source_value(table, ":mean(x)") == pytest.approx(0.157355)
    assert agrees("0.115", 0.11471) and agrees("0.1147", 0.11471)
    assert not agrees("0.116", 0.11471)  # the stale number docs/defaults.md once gave
    assert agrees("−0.072", -0.0716) and agrees("+0.017", 0.0167) and agrees("worse", "worse")
    assert not agrees("better", "worse")
    with pytest.raises(AssertionError, match="picks 2 rows"):
        source_value(table, ":x")
    settings = tmp_path / "s.json"
    settings.write_text('{"a": {"b": [1.5, 2]}}')
    assert source_value(settings, "a.b.0") == 1.5
    [(path, selector, written)] = MARKER.findall("a <!-- from r/t.csv:base=0:x -->0.115 b")
    assert (path, selector, written) == ("r/t.csv", "base=0:x", "0.115")
