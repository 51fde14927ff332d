"""The user's own (x, y) pairs: read, tokenized, checked, split by a key (docs/own-data.md).

A pairs file becomes the same three split tables as the synthetic world (`SYNTHETIC_SCHEMA`),
so every later stage runs unchanged. What only a known generative process has stays empty: no
hidden strategy (label −1, no prior or posterior), no per-token oracle (NaN). The oracle's
sequence columns carry the file's oracle columns when params name them, NaN otherwise.
Every problem with the file is one `DataError` line naming the file, raised before anything is
written.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from zgain.core.errors import DataError
from zgain.core.io import list_array
from zgain.params import PairsParams, Params
from zgain.world.frames import Frames
from zgain.world.splits import SPLITS, SYNTHETIC_SCHEMA

SEPARATORS = {"csv": ",", "tsv": "\t"}
MAX_CONTENT = 32_000  # token ids are int16 in the tables, the 3 specials on top


@dataclass(frozen=True)
class Pairs:
    """Tokenized pairs: token-id lists, the split keys, the oracle columns (NaN without)."""

    x: list[np.ndarray]
    y: list[np.ndarray]
    keys: np.ndarray  # (N,) the split key of each row, as strings
    oracle_nll: np.ndarray  # (N,)
    oracle_info: np.ndarray  # (N,)
    tokens: tuple[str, ...]  # names of the content tokens (ids: their decimal ids)
    truncated: dict[str, int]  # rows cut to the frames, per side


def file_format(data: PairsParams) -> str:
    """`data.format`, or the file's suffix when `auto`."""
    if data.format != "auto":
        return data.format
    suffix = Path(data.file).suffix.lower().lstrip(".")
    if suffix not in ("parquet", "csv", "tsv"):
        raise DataError(
            f"{data.file}: cannot tell the format from the suffix {suffix!r} "
            "(use .parquet, .csv or .tsv, or set data.format)"
        )
    return suffix


def read_frame(data: PairsParams) -> pd.DataFrame:
    """The pairs file as a DataFrame with the columns params name; one-line errors."""
    path = Path(data.file)
    if not path.is_file():
        raise DataError(f"{path}: file not found")
    kind = file_format(data)
    try:
        if kind == "parquet":
            frame = pq.read_table(path).to_pandas()
        else:
            frame = pd.read_csv(
                path, sep=SEPARATORS[kind], dtype=str, keep_default_na=False, quoting=3
            )
    except (pa.ArrowException, OSError, ValueError, pd.errors.ParserError) as err:
        first = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise DataError(f"{path}: not a readable {kind} file ({first})") from None
    wanted = [data.x_column, data.y_column]
    if data.key_column is not None:
        wanted.append(data.key_column)
    if data.oracle is not None:
        wanted += [data.oracle.nll, data.oracle.info]
    for name in wanted:
        if name not in frame.columns:
            raise DataError(f"{path}: missing column {name!r} (found {list(frame.columns)})")
    if frame.empty:
        raise DataError(f"{path}: no rows")
    return frame


def _text_tokens(value: object, tokenizer: str) -> list[str]:
    text = "" if value is None else str(value)
    return list(text) if tokenizer == "char" else text.split()


def tokenize(frame: pd.DataFrame, data: PairsParams) -> tuple[list, list, tuple[str, ...]]:
    """Both columns as lists of token ids, and the content tokens' names: ids as given, or
    text cut by each side's tokenizer into one vocabulary shared by x and y (sorted)."""
    path = data.file
    columns = (data.x_column, data.y_column)
    if data.tokenizer == "ids":
        assert data.vocab_size is not None  # PairsParams requires it for ids
        x, y = (
            [_ids(value, path, c, row, data.vocab_size) for row, value in enumerate(frame[c])]
            for c in columns
        )
        return x, y, tuple(str(i) for i in range(data.vocab_size))
    split = [
        [_text_tokens(v, tokenizer) for v in frame[c]]
        for c, tokenizer in zip(columns, data.tokenizers, strict=True)
    ]
    tokens = tuple(sorted({t for side in split for row in side for t in row}))
    if len(tokens) > MAX_CONTENT:
        raise DataError(
            f"{path}: {len(tokens)} distinct tokens, more than the {MAX_CONTENT} a table holds"
        )
    index = {t: i for i, t in enumerate(tokens)}
    x, y = ([np.array([index[t] for t in row], dtype=np.int64) for row in side] for side in split)
    return x, y, tokens


def _ids(value: object, path: str, column: str, row: int, vocab_size: int) -> np.ndarray:
    """One row of token ids (a list, or space-separated decimal text), each in [0, vocab_size)."""
    try:
        if isinstance(value, str):
            ids = np.array([int(t) for t in value.split()], dtype=np.int64)
        else:
            ids = np.asarray(value, dtype=np.int64).reshape(-1)
    except (TypeError, ValueError):
        raise DataError(f"{path}: row {row}, column {column!r}: not token ids: {value!r}") from None
    bad = (ids < 0) | (ids >= vocab_size)
    if bad.any():
        raise DataError(
            f"{path}: row {row}, column {column!r}: unknown token id {int(ids[bad][0])} "
            f"(data.vocab_size {vocab_size}: ids 0..{vocab_size - 1})"
        )
    return ids


def _fit(rows: list[np.ndarray], cap: int, name: str, data: PairsParams) -> tuple[list, int]:
    """Rows within the cap: cut and counted when data.truncate, else the first long row stops."""
    lengths = np.array([len(r) for r in rows])
    empty = np.flatnonzero(lengths == 0)
    if empty.size:
        raise DataError(f"{data.file}: row {int(empty[0])}: empty {name} sequence")
    long = np.flatnonzero(lengths > cap)
    if long.size and not data.truncate:
        row = int(long[0])
        raise DataError(
            f"{data.file}: row {row}: {name} has {int(lengths[row])} tokens, more than "
            f"data.max_{name}_len ({cap}); {long.size} rows are longer (raise the cap, or set "
            "data.truncate: true to cut them)"
        )
    return [r[:cap] for r in rows], int(long.size)


def _oracle(frame: pd.DataFrame, data: PairsParams) -> tuple[np.ndarray, np.ndarray]:
    n = len(frame)
    if data.oracle is None:
        return np.full(n, np.nan), np.full(n, np.nan)
    out = []
    for column in (data.oracle.nll, data.oracle.info):
        values = pd.to_numeric(frame[column], errors="coerce").to_numpy(dtype=np.float64)
        bad = np.flatnonzero(~np.isfinite(values) | (values < 0))
        if bad.size:
            raise DataError(
                f"{data.file}: row {int(bad[0])}, oracle column {column!r}: must be a finite "
                f"number >= 0 (nats), got {frame[column].iloc[int(bad[0])]!r}"
            )
        out.append(values)
    nll, info = out
    over = np.flatnonzero(info > nll + 1e-9)
    if over.size:
        raise DataError(
            f"{data.file}: row {int(over[0])}: oracle info {info[over[0]]!r} exceeds oracle nll "
            f"{nll[over[0]]!r} (I* <= −log p(y|x))"
        )
    return nll, info


def read_pairs(data: PairsParams) -> Pairs:
    """The file's pairs, tokenized and within the frames; DataError on the first problem."""
    frame = read_frame(data)
    x, y, tokens = tokenize(frame, data)
    x, cut_x = _fit(x, data.max_x_len, "x", data)
    y, cut_y = _fit(y, data.max_y_len, "y", data)
    key_column = data.x_column if data.key_column is None else data.key_column
    keys = frame[key_column].map(str).to_numpy()
    nll, info = _oracle(frame, data)
    return Pairs(x, y, keys, nll, info, tokens, {"x": cut_x, "y": cut_y})


def split_rows(pairs: Pairs, data: PairsParams) -> dict[str, np.ndarray]:
    """Row indices per split: the distinct keys shuffled by data.seed, then cut by the
    fractions, so all rows with one key land in one split."""
    unique, inverse = np.unique(pairs.keys, return_inverse=True)
    order = np.random.default_rng(data.seed).permutation(len(unique))
    n_test = int(round(data.test_fraction * len(unique)))
    n_val = int(round(data.val_fraction * len(unique)))
    where = np.empty(len(unique), dtype=np.int64)
    where[order[:n_test]] = 2
    where[order[n_test : n_test + n_val]] = 1
    where[order[n_test + n_val :]] = 0
    rows = {split: np.flatnonzero(where[inverse] == i) for i, split in enumerate(SPLITS)}
    for split, chosen in rows.items():
        if chosen.size == 0:
            raise DataError(
                f"{data.file}: the {split} split has no examples ({len(unique)} distinct keys; "
                f"data.val_fraction {data.val_fraction}, data.test_fraction {data.test_fraction})"
            )
    return rows


def split_table(pairs: Pairs, rows: np.ndarray, split: str, first_id: int) -> pa.Table:
    """The rows of one split in `SYNTHETIC_SCHEMA`: no strategy, NaN per-token oracle."""
    n = len(rows)
    y_len = np.array([len(pairs.y[i]) for i in rows], dtype=np.int64)
    nll, info = pairs.oracle_nll[rows], pairs.oracle_info[rows]
    n_tokens = y_len + 1
    nan_tokens = np.full((n, int(n_tokens.max(initial=1))), np.nan)
    columns = {
        "example_id": pa.array(np.arange(first_id, first_id + n, dtype=np.int64)),
        "split": pa.array([split] * n),
        "x": _lists([pairs.x[i] for i in rows]),
        "y": _lists([pairs.y[i] for i in rows]),
        "strategy": pa.array(np.full(n, -1, dtype=np.int16)),
        "prior": list_array(np.zeros((n, 0)), np.zeros(n, dtype=np.int64)),
        "posterior": list_array(np.zeros((n, 0)), np.zeros(n, dtype=np.int64)),
        "oracle_nll": pa.array(nll),
        "oracle_nll_given_s": pa.array(nll - info),
        "oracle_info": pa.array(info),
        "prior_entropy": pa.array(np.full(n, np.nan)),
        "oracle_surprisal": list_array(nan_tokens, n_tokens),
        "oracle_token_info": list_array(nan_tokens, n_tokens),
    }
    return pa.table(columns).cast(SYNTHETIC_SCHEMA)


def _lists(rows: list[np.ndarray]) -> pa.ListArray:
    lengths = np.array([len(r) for r in rows], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    values = np.concatenate(rows) if rows else np.zeros(0, dtype=np.int64)
    return pa.ListArray.from_arrays(pa.array(offsets), pa.array(values.astype(np.int16)))


def pairs_frames(pairs: Pairs, data: PairsParams) -> Frames:
    return Frames(len(pairs.tokens), data.max_x_len, data.max_y_len, pairs.tokens)


def check_sizes(sizes: dict[str, int], params: Params, path: str) -> None:
    """Batch sizes and validation examples that the splits cannot supply, one line each."""
    common = params.cvae.common
    wanted = [
        ("base.batch_size", params.base.batch_size, "train"),
        ("cvae.common.batch_size", common.batch_size, "train"),
        ("cvae.common.val_examples", common.val_examples, "val"),
    ]
    for key, value, split in wanted:
        if value > sizes[split]:
            raise DataError(
                f"{path}: the {split} split has {sizes[split]} examples, fewer than {key} ({value})"
            )
