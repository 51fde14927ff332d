"""Nothing lost from the summary: every table row of an older summary.md (the one-file layout)
appears, with the same row label and the same numbers in the same order, in a table of the new
summary.md or one of its views (details.md, diagnostics.md).

    .venv/bin/python tests/report/nothing_lost.py OLD_SUMMARY.md NEW_REPORTS_DIR

prints each row not found and exits 1 if there is one. A row's label is its first cell; a
header row's label is its first column's name. Numbers are the signed decimals of its cells.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?")
VIEWS = ("summary.md", "details.md", "diagnostics.md")


def table_rows(text: str) -> list[tuple[str, tuple[str, ...]]]:
    """(label, numbers) of every Markdown table row of `text` (separator rows left out)."""
    rows = []
    for line in text.splitlines():
        if not line.startswith("|") or set(line) <= set("|-: "):
            continue
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
        numbers = tuple(n for cell in cells[1:] for n in NUMBER.findall(cell))
        rows.append((cells[0] if cells else "", numbers))
    return rows


def contains(numbers: tuple[str, ...], within: tuple[str, ...]) -> bool:
    """Whether `numbers` is a subsequence of `within` (a new row may carry more columns)."""
    it = iter(within)
    return all(n in it for n in numbers)


def missing_rows(old_summary: str, new_texts: list[str]) -> list[tuple[str, tuple[str, ...]]]:
    """The old summary's table rows with no new row of the same label holding its numbers."""
    new: dict[str, list[tuple[str, ...]]] = {}
    for text in new_texts:
        for label, numbers in table_rows(text):
            new.setdefault(label, []).append(numbers)
    return [
        (label, numbers)
        for label, numbers in table_rows(old_summary)
        if not any(contains(numbers, candidate) for candidate in new.get(label, []))
    ]


def main(argv: list[str]) -> int:
    old, folder = Path(argv[0]).read_text(), Path(argv[1])
    texts = [(folder / name).read_text() for name in VIEWS if (folder / name).is_file()]
    lost = missing_rows(old, texts)
    for label, numbers in lost:
        print(f"not found: {label!r} {' '.join(numbers)}")
    print(f"{len(table_rows(old)) - len(lost)} of {len(table_rows(old))} table rows found")
    return 1 if lost else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
