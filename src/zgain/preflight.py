"""What `check_params` says beyond the params schema, before any stage runs.

Three things the schema alone words badly or cannot see: a `data` block whose `source` was
switched without replacing the rest of the block (one hint instead of a line per key of the
other source), a test split too small for the probe's split (blamed on `data.n_test` with the
values that would pass, not on the fraction alone), and the pairs file's header (a column that
params name but the file lacks, or a Parquet column of the wrong type, named by its key and the
file), which `generate` would otherwise find only once DVC has started it. For a pairs file
whose header is right, two more: splits too small to train or test (`split_size_errors`), and
an even number of target rates without an oracle, where the headline rate would silently be the
lower of the two middle ones (`headline_rate_errors`). Only `check_params` imports this module.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from zgain.core.errors import DataError, ParamsError
from zgain.params import PARAMS_FILE, DataParams, PairsParams, read_yaml

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
# The fewest examples the test split may hold: its intervals over examples need two. (The train
# and validation splits' minimums come from params: `split_minimums`.)
MIN_TEST_ROWS = 2
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


def pairs_header_errors(data: PairsParams, raw: object = None) -> list[str]:
    """What is wrong with the pairs file before `generate` reads it: each column that params
    name and the file lacks (or, in Parquet, holds with the wrong type), one line naming its
    key, the file and the file's columns; with a right header, splits too small to train or
    test on and an undeclared headline rate. `raw`: the parsed params (None: params.yaml in the
    working directory, the file check_params validates, which passes the data block alone)."""
    lines = _header_errors(data)
    if lines:
        return lines
    if raw is None:
        try:
            raw = read_yaml(PARAMS_FILE)
        except ParamsError:
            raw = {}
    rates = _value(raw, "cvae", "rates")
    rates = list(rates) if isinstance(rates, list) else []
    return split_size_errors(data, split_minimums(raw)) + headline_rate_errors(rates, data)


def _value(raw: object, *keys: str) -> object:
    for key in keys:
        raw = raw.get(key) if isinstance(raw, dict) else None
    return raw


def split_minimums(raw: object) -> dict[str, tuple[int, str]]:
    """The fewest rows each split may hold, and what sets it: the train split must fill a batch
    of the base and of the CVAE, the validation split the CVAE's validation examples (as
    `generate` itself checks: zgain.world.pairs.check_sizes), the test split MIN_TEST_ROWS."""

    def sized(*keys: str) -> tuple[int, str]:
        value = _value(raw, *keys)
        return (value if isinstance(value, int) else 1), ".".join(keys)

    train = max(
        sized("base", "batch_size"), sized("cvae", "common", "batch_size"), key=lambda m: m[0]
    )  # the first named on a tie
    val = sized("cvae", "common", "val_examples")
    return {"train": train, "val": val, "test": (MIN_TEST_ROWS, "intervals over examples")}


def headline_rate_errors(rates: Sequence[float], data: PairsParams) -> list[str]:
    """Without an oracle the headline rate is the middle of the sorted rates
    (the report's `headline_rate`); an even number of rates has no middle one, and the report
    would take the lower of the two without saying so. Params have no field to declare the
    headline, so the remedy is an odd number of rates."""
    if data.oracle is not None or not rates or len(rates) % 2:
        return []
    ordered = sorted(rates)
    low, high = ordered[len(ordered) // 2 - 1], ordered[len(ordered) // 2]
    listed = ", ".join(f"{r:g}" for r in rates)
    return [
        f"cvae.rates: {len(rates)} rates ({listed}) and no oracle (data.oracle: null): the "
        f"headline rate is the middle rate, and an even number has two ({low:g} and {high:g}); "
        f"list an odd number of rates, the headline in the middle, got {len(rates)}"
    ]


def split_sizes(keys: Sequence[str], data: PairsParams) -> dict[str, int]:
    """The rows of each split as `generate` cuts them (zgain.world.pairs.split_rows): the
    distinct keys shuffled by data.seed, cut by the fractions, every row with its key."""
    unique, inverse = np.unique(np.asarray(keys, dtype=str), return_inverse=True)
    order = np.random.default_rng(data.seed).permutation(len(unique))
    n_test = int(round(data.test_fraction * len(unique)))
    n_val = int(round(data.val_fraction * len(unique)))
    where = np.zeros(len(unique), dtype=np.int64)
    where[order[:n_test]] = 2
    where[order[n_test : n_test + n_val]] = 1
    counts = np.bincount(where[inverse], minlength=3)
    return {"train": int(counts[0]), "val": int(counts[1]), "test": int(counts[2])}


def split_size_errors(data: PairsParams, minimums: dict[str, tuple[int, str]]) -> list[str]:
    """One line when a split of the pairs file would hold fewer rows than its minimum
    (`split_minimums`), naming the file's rows and distinct keys, every split's size, the
    fractions, and each short split's minimum with what sets it. Reads the file (the key column
    decides the splits)."""
    from zgain.world.pairs import read_frame

    try:
        frame = read_frame(data)
    except DataError as err:
        return [f"data.file: {err}"]
    key = data.x_column if data.key_column is None else data.key_column
    keys = frame[key].map(str).to_numpy()
    sizes = split_sizes(keys, data)
    short = [
        f"{name} {n} < {minimums[name][0]} ({minimums[name][1]})"
        for name, n in sizes.items()
        if n < minimums[name][0]
    ]
    if not short:
        return []
    listed = ", ".join(f"{name} {n}" for name, n in sizes.items())
    return [
        f"data.file: {data.file} has {len(keys)} rows ({len(set(keys))} distinct keys), split "
        f"{listed} by data.val_fraction {data.val_fraction:g} and data.test_fraction "
        f"{data.test_fraction:g}; too small to train or test on: {', '.join(short)} (more "
        "rows, or other fractions)"
    ]


def _header_errors(data: PairsParams) -> list[str]:
    """Each column that params name and the pairs file lacks (or, in Parquet, holds with the
    wrong type). Reads the header only: a CSV/TSV file's first line, a Parquet file's schema."""
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
