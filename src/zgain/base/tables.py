"""The one checked reader of the surprisal tables (docs/method.md#the-base-model-and-its-surprisal).

`tokens.parquet` and `examples.parquet` are read together and checked as a pair before anything
uses them: schemas, one base sha256 recorded in both, finite and non-negative surprisal and
oracle columns, the same examples in both (each with exactly its positions 0..T-1), and
B = Σ_t b_t, b = B / T per example. Every problem raises `DataError` naming the file.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from zgain.base.schema import EXAMPLES_SCHEMA, TOKENS_SCHEMA
from zgain.core.errors import DataError
from zgain.core.io import BASE_SHA_KEY, read_table, table_metadata

TOKENS_FILE = "tokens.parquet"
EXAMPLES_FILE = "examples.parquet"

SURPRISAL_COLUMNS = {
    TOKENS_FILE: ("surprisal",),
    EXAMPLES_FILE: ("surprisal_sum", "surprisal_mean", "concentration"),
}
ORACLE_COLUMNS = {
    TOKENS_FILE: ("oracle_surprisal",),
    EXAMPLES_FILE: ("oracle_nll", "oracle_nll_given_s", "oracle_info"),
}
ORACLE_ROUNDING_NATS = 1e-9
"""How far below 0 an oracle value may round: I* = nll − nll_given_s is a difference of sums."""

SUM_RTOL, SUM_ATOL = 1e-5, 1e-5
"""Tolerance of B = Σ_t b_t: b_t is stored as float32 (relative precision ~6e-8 per token)."""


class SurprisalTables(NamedTuple):
    """Both surprisal tables after every check, with the base sha256 they share."""

    tokens: pa.Table
    examples: pa.Table
    base_sha256: str
    tokens_path: Path
    examples_path: Path


def _base_sha(table: pa.Table, path: Path) -> str:
    sha = table_metadata(table).get(BASE_SHA_KEY)
    if sha is None:
        raise DataError(f"{path}: records no base checkpoint sha256 (key {BASE_SHA_KEY})")
    return sha


def _check_values(table: pa.Table, path: Path, ids: np.ndarray) -> None:
    """Finite and >= 0 in every surprisal and oracle column (oracle columns up to rounding).

    An oracle column may instead be NaN throughout: data without an oracle (a pairs file,
    docs/own-data.md); a mix of NaN and numbers is an error.
    """
    name = path.name
    for columns, floor in ((SURPRISAL_COLUMNS, 0.0), (ORACLE_COLUMNS, -ORACLE_ROUNDING_NATS)):
        for column in columns[name]:
            values = table[column].to_numpy()
            if columns is ORACLE_COLUMNS and values.size and np.isnan(values).all():
                continue
            bad = ~np.isfinite(values) | (values < floor)
            if bad.any():
                row = int(np.flatnonzero(bad)[0])
                raise DataError(
                    f"{path}: {column} of example {ids[row]} is {values[row]}, must be finite "
                    f"and >= 0 ({int(bad.sum())} bad rows)"
                )


def first_repeat(values: np.ndarray) -> int | None:
    """The index of the first element equal to an earlier one, None when all are distinct.

    A sort finds whether any repeats (fast); only then are the indices searched.
    """
    ordered = np.sort(values, kind="stable")
    if not np.any(ordered[1:] == ordered[:-1]):
        return None
    _, first = np.unique(values, return_index=True)
    return int(np.setdiff1d(np.arange(values.size), first)[0])


def _check_pair(tables: SurprisalTables) -> None:
    """The same examples in both tables, each with positions 0..T-1 and B = Σ_t b_t."""
    tokens, examples = tables.tokens, tables.examples
    tokens_path, examples_path = tables.tokens_path, tables.examples_path
    example_ids = examples["example_id"].to_numpy()
    if example_ids.size == 0:
        raise DataError(f"{examples_path}: no examples")
    repeated = first_repeat(example_ids)
    if repeated is not None:
        raise DataError(f"{examples_path}: example {example_ids[repeated]} appears more than once")
    n_tokens = examples["n_tokens"].to_numpy().astype(np.int64)
    if np.any(n_tokens < 1):
        row = int(np.flatnonzero(n_tokens < 1)[0])
        raise DataError(
            f"{examples_path}: n_tokens of example {example_ids[row]} is {n_tokens[row]}, "
            "must be >= 1 (EOS is always a target)"
        )
    token_ids = tokens["example_id"].to_numpy()
    order = np.argsort(example_ids, kind="stable")
    found = np.searchsorted(example_ids, token_ids, sorter=order).clip(max=example_ids.size - 1)
    rows = order[found]  # row in examples of each token's example
    unknown = example_ids[rows] != token_ids
    if unknown.any():
        raise DataError(
            f"{tokens_path}: example {token_ids[np.flatnonzero(unknown)[0]]} is not in "
            f"{examples_path}"
        )
    counts = np.bincount(rows, minlength=example_ids.size)
    if not np.array_equal(counts, n_tokens):
        row = int(np.flatnonzero(counts != n_tokens)[0])
        raise DataError(
            f"{tokens_path}: example {example_ids[row]} has {counts[row]} token rows, but "
            f"{examples_path} gives n_tokens {n_tokens[row]} "
            f"({tokens.num_rows} token rows against n_tokens summing to {n_tokens.sum()})"
        )
    positions = tokens["position"].to_numpy().astype(np.int64)
    outside = (positions < 0) | (positions >= n_tokens[rows])
    key = rows * (int(n_tokens.max()) + 1) + positions
    repeated = None if outside.any() else first_repeat(key)
    if outside.any() or repeated is not None:
        bad = int(np.flatnonzero(outside)[0]) if outside.any() else repeated
        raise DataError(
            f"{tokens_path}: the positions of example {token_ids[bad]} are not 0..T-1 "
            f"(T = {n_tokens[rows[bad]]} in {examples_path})"
        )
    same_split = pc.equal(tokens["split"], examples["split"].take(pa.array(rows)))
    if not pc.all(same_split).as_py():
        bad = int(np.flatnonzero(~same_split.to_numpy(zero_copy_only=False))[0])
        raise DataError(
            f"{tokens_path}: example {token_ids[bad]} is in split {tokens['split'][bad]} here "
            f"but in {examples['split'][rows[bad]]} in {examples_path}"
        )
    token_sum = np.bincount(
        rows, weights=tokens["surprisal"].to_numpy().astype(np.float64), minlength=example_ids.size
    )
    stored_sum = examples["surprisal_sum"].to_numpy()
    stored_mean = examples["surprisal_mean"].to_numpy()
    for column, stored, expected in (
        ("surprisal_sum", stored_sum, token_sum),
        ("surprisal_mean", stored_mean, stored_sum / n_tokens),
    ):
        off = ~np.isclose(stored, expected, rtol=SUM_RTOL, atol=SUM_ATOL)
        if off.any():
            row = int(np.flatnonzero(off)[0])
            raise DataError(
                f"{examples_path}: {column} of example {example_ids[row]} is {stored[row]}, "
                f"but its tokens in {tokens_path} give {expected[row]}"
            )


def read_surprisal_tables(surprisal_dir: str | Path) -> SurprisalTables:
    """`tokens.parquet` and `examples.parquet` of `surprisal_dir`, checked as a pair."""
    tokens_path = Path(surprisal_dir) / TOKENS_FILE
    examples_path = Path(surprisal_dir) / EXAMPLES_FILE
    tokens = read_table(tokens_path, TOKENS_SCHEMA)
    examples = read_table(examples_path, EXAMPLES_SCHEMA)
    sha = _base_sha(tokens, tokens_path)
    if _base_sha(examples, examples_path) != sha:
        raise DataError(
            f"{tokens_path} and {examples_path} record different base checkpoints "
            f"({sha} and {_base_sha(examples, examples_path)}): rerun the surprisal stage"
        )
    _check_values(tokens, tokens_path, tokens["example_id"].to_numpy())
    _check_values(examples, examples_path, examples["example_id"].to_numpy())
    tables = SurprisalTables(tokens, examples, sha, tokens_path, examples_path)
    _check_pair(tables)
    return tables
