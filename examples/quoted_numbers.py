"""Rewrite every number the README and docs quote through a source marker from its source.

    python examples/quoted_numbers.py          # rewrite README.md, docs/*.md, studies/*/README.md
    python examples/quoted_numbers.py --check  # list the quotes that differ, exit 1 if any

A quote is `<!-- from PATH:SELECTOR -->VALUE` (tests/test_docs_numbers.py reads the same
markers and holds each VALUE equal to its source). After a new committed run, this writes
each VALUE again at the precision it had (a word as the source's word), so no number is
typed by hand; the sentences around them still need reading.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def load_checker():
    """tests/test_docs_numbers.py, by path (its MARKER, PAGES, source_value and agrees)."""
    sys.path.insert(0, str(ROOT / "tests"))
    spec = importlib.util.spec_from_file_location(
        "docs_numbers", ROOT / "tests/test_docs_numbers.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def written_like(old: str, value: object) -> str:
    """`value` written as `old` was: the same decimals and thousands commas, its sign as a − (or
    - when old used -), a + before a positive value when old carried a sign; a word as the
    source's text."""
    bare = old.replace("−", "").replace("-", "").replace("+", "")
    if not bare[:1].isdigit():
        return str(value)
    decimals = len(bare.replace(",", "").partition(".")[2])
    number = float(value)
    text = f"{abs(number):{',' if ',' in bare else ''}.{decimals}f}"
    signed = old[:1] in "+−-"
    if number < 0 and float(text.replace(",", "")) != 0:
        return ("-" if old.startswith("-") else "−") + text
    return ("+" + text) if signed else text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    checker = load_checker()
    differing = 0
    for page in checker.PAGES:
        text = page.read_text()

        def rewrite(match, page=page):
            nonlocal differing
            path, selector, old = match.groups()
            value = checker.source_value(ROOT / path, selector)
            if checker.agrees(old, value):
                return match.group(0)
            differing += 1
            new = written_like(old, value)
            print(f"{page.relative_to(ROOT)}: {path}:{selector} {old} -> {new}")
            return match.group(0)[: -len(old)] + new

        new_text = checker.MARKER.sub(rewrite, text)
        if not args.check and new_text != text:
            page.write_text(new_text)
    sys.exit(1 if args.check and differing else 0)


if __name__ == "__main__":
    main()
