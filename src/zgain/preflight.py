"""What `check_params` says beyond the params schema, before any stage runs.

Three things the schema alone words badly or cannot see: a `data` block whose `source` was
switched without replacing the rest of the block (one hint instead of a line per key of the
other source), a test split too small for the probe's split (blamed on `data.n_test` with the
values that would pass, not on the fraction alone), and the pairs file's header (a column that
params name but the file lacks, or a Parquet column of the wrong type, named by its key and the
file), which `generate` would otherwise find only once DVC has started it. Only `check_params`
imports this module.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

from zgain.params import DataParams, PairsParams

SOURCE_BLOCKS = {"synthetic": DataParams, "pairs": PairsParams}
SEPARATORS = {"csv": ",", "tsv": "\t"}
# where each source's data block is written out in full
BLOCK_DOCS = {
    "synthetic": "docs/method.md#the-synthetic-world",
    "pairs": "docs/own-data.md#the-params",
}
# A held-out share inside these bounds is taken as meant, so a too-small probe split is blamed
# on the test split's size; a share outside them is blamed itself.
USUAL_SHARES = (0.1, 0.9)
_DATA_KEY = re.compile(r"^data\.(\w+): (missing required key|unknown key \(known: [^)]*\))$")
_PROBE = re.compile(
    r"^evaluate\.probe_test_fraction: must leave at least one example per strategy \((\d+)\) "
    r".* of data\.n_test \((\d+)\).*, got ([0-9.eE+-]+)$"
)


def switched_source_lines(raw: object, lines: list[str]) -> list[str]:
    """The schema's lines, with those of a half-switched `data` block replaced by one hint.

    raw: the parsed params.yaml; lines: the schema's error lines for it.
    """
    data = raw.get("data") if isinstance(raw, dict) else None
    source = data.get("source", "synthetic") if isinstance(data, dict) else None
    block = SOURCE_BLOCKS.get(source) if isinstance(source, str) else None
    if block is None:
        return lines
    others = {k for b in SOURCE_BLOCKS.values() if b is not block for k in b.model_fields}
    keyed = {line: _DATA_KEY.match(line) for line in lines}
    foreign = sorted(m.group(1) for m in keyed.values() if m and m.group(1) in others - {"seed"})
    if not foreign:
        return lines
    missing = [m.group(1) for m in keyed.values() if m and m.group(2) == "missing required key"]
    other = "the synthetic world" if source == "pairs" else "a pairs file"
    hint = (
        f"data.source: {source} takes its own data block, and this one still holds the keys of "
        f"{other}: replace the whole block (the {source} block: {BLOCK_DOCS[source]})"
    )
    detail = f"data: remove {', '.join(foreign[:3])}" + (
        f" and {len(foreign) - 3} more" if len(foreign) > 3 else ""
    )
    if missing:
        detail += f"; add {', '.join(missing)}"
    return [hint, detail] + [line for line, m in keyed.items() if not m]


def probe_split_lines(lines: list[str]) -> list[str]:
    """The probe-split line blamed on the key a user most likely changed: `data.n_test` while
    the held-out share is a usual one (`USUAL_SHARES`), the share otherwise; either way with
    the smallest test split that passes at this share and the shares that pass at this size."""
    out = []
    for line in lines:
        found = _PROBE.match(line)
        if not found:
            out.append(line)
            continue
        classes, n_test, fraction = int(found[1]), int(found[2]), float(found[3])
        fixes = []
        first = max(2 * classes, math.floor((classes - 1) / fraction) + 1)
        needed = next(
            (n for n in range(first, first + 10**6) if _probe_fits(n, fraction, classes)), None
        )
        if needed is not None:
            fixes.append(f"data.n_test >= {needed}")
        if n_test >= 2 * classes:
            low, high = (classes - 1) / n_test, (n_test - classes) / n_test
            fixes.append(f"a fraction in ({low:.3g}, {high:.3g}]")
        usual = USUAL_SHARES[0] <= fraction <= USUAL_SHARES[1]
        key, value = (
            ("data.n_test", n_test) if usual else ("evaluate.probe_test_fraction", fraction)
        )
        text = (
            f"{key}: the probe holds out {fraction:g} of the {n_test} test examples and needs "
            f">= {classes} (one per strategy) on each side"
        )
        out.append(
            f"{text}: needs {' or '.join(fixes)}, got {value}" if fixes else f"{text}, got {value}"
        )
    return out


def _probe_fits(n_test: int, fraction: float, classes: int) -> bool:
    held_out = math.ceil(fraction * n_test)  # how scikit-learn sizes the test part
    return min(held_out, n_test - held_out) >= classes


def pairs_header_errors(data: PairsParams) -> list[str]:
    """Each column that params name and the pairs file lacks (or, in Parquet, holds with the
    wrong type), one line naming its key, the file and the file's columns. Reads the header
    only: a CSV/TSV file's first line, a Parquet file's schema."""
    path = Path(data.file)
    kind = data.format if data.format != "auto" else path.suffix.lower().lstrip(".")
    if kind not in ("parquet", *SEPARATORS):
        return [f"data.format: cannot tell the format of {path} from its suffix (set it)"]
    try:
        types = _parquet_types(path) if kind == "parquet" else _text_columns(path, kind)
    except (OSError, ValueError) as err:
        first = (str(err).splitlines() or [type(err).__name__])[0]
        return [f"data.file: {path} is not a readable {kind} file ({first})"]
    out = []
    for key, column, allowed in _named_columns(data):
        if column not in types:
            found = ", ".join(types) or "none"
            out.append(f"data.{key}: {path} has no column {column!r} (its columns: {found})")
        elif types[column] not in allowed:
            wanted = " or ".join(allowed)
            got = types[column]
            out.append(f"data.{key}: column {column!r} of {path} must hold {wanted}, got {got}")
    return out


def _named_columns(data: PairsParams) -> list[tuple[str, str, tuple[str, ...]]]:
    """(key, column, the kinds of values `generate` reads from it) for every column params
    name: text for a text tokenizer, token-id lists (or their text) for ids, numbers (or their
    text) for the oracle."""
    cells = {"ids": ("list of integers", "text"), "char": ("text",), "whitespace": ("text",)}
    x_tok, y_tok = data.tokenizers
    named = [("x_column", data.x_column, cells[x_tok]), ("y_column", data.y_column, cells[y_tok])]
    if data.key_column is not None:
        named.append(("key_column", data.key_column, ("text", "numbers", "list of integers")))
    if data.oracle is not None:
        for key, column in (("oracle.nll", data.oracle.nll), ("oracle.info", data.oracle.info)):
            named.append((key, column, ("numbers", "text")))
    return named


def _text_columns(path: Path, kind: str) -> dict[str, str]:
    """A CSV/TSV file's columns (from its first line, unquoted as `generate` reads it): all
    text until `generate` parses them."""
    with path.open(encoding="utf-8") as handle:
        header = handle.readline().rstrip("\r\n")
    return {name: "text" for name in header.split(SEPARATORS[kind])} if header else {}


def _parquet_types(path: Path) -> dict[str, str]:
    """A Parquet file's columns and the kind of their values (`text`, `numbers`, `list of
    integers`, else Arrow's own name for the type)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        schema = pq.read_schema(path)
    except pa.ArrowException as err:
        raise ValueError(str(err)) from None
    return {field.name: _kind(field.type) for field in schema}


def _kind(arrow: object) -> str:
    import pyarrow as pa

    if pa.types.is_string(arrow) or pa.types.is_large_string(arrow):
        return "text"
    if pa.types.is_floating(arrow) or pa.types.is_integer(arrow):
        return "numbers"
    listed = pa.types.is_list(arrow) or pa.types.is_large_list(arrow)
    if listed and pa.types.is_integer(arrow.value_type):
        return "list of integers"
    return str(arrow)
