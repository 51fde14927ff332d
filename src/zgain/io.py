"""Parquet schemas (SPEC §6), atomic writes and provenance checks.

Every table the pipeline writes has its schema here, written down once; readers check the file
against it, so a corrupted, truncated or mismatched file fails with its path and the problem.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

BASE_SHA_KEY = "zgain.base_sha256"  # Parquet metadata key: sha256 of the base checkpoint used
COMPRESSION = "zstd"
_CHUNK = 1 << 20
FILE_MODE = 0o644  # bytes read at a time when hashing

SYNTHETIC_SCHEMA = pa.schema(
    [
        ("example_id", pa.int64()),
        ("split", pa.string()),
        ("x", pa.list_(pa.int16())),
        ("y", pa.list_(pa.int16())),
        ("strategy", pa.int16()),  # hidden label s
        ("prior", pa.list_(pa.float64())),  # p(s | x), K entries
        ("posterior", pa.list_(pa.float64())),  # p(s | x, y), K entries
        ("oracle_nll", pa.float64()),  # −log p(y | x), nats
        ("oracle_nll_given_s", pa.float64()),  # E_{p(s|x,y)}[−log p(y | x, s)], nats
        ("oracle_info", pa.float64()),  # I* = oracle_nll − oracle_nll_given_s, nats
        ("prior_entropy", pa.float64()),  # H(S | x), nats
        ("oracle_surprisal", pa.list_(pa.float64())),  # b*_t on the y tokens and EOS
        ("oracle_token_info", pa.list_(pa.float64())),  # per-token share of I*
    ]
)

TOKENS_SCHEMA = pa.schema(
    [
        ("example_id", pa.int64()),
        ("split", pa.string()),
        ("position", pa.int16()),  # 0..T-1 over the y tokens then EOS
        ("token", pa.int16()),  # the target token (EOS included)
        ("surprisal", pa.float32()),  # b_t = −log p_base(y_t | y_<t, x), nats
        ("oracle_surprisal", pa.float64()),  # b*_t, nats
    ]
)

EXAMPLES_SCHEMA = pa.schema(
    [
        ("example_id", pa.int64()),
        ("split", pa.string()),
        ("n_tokens", pa.int32()),  # T
        ("surprisal_sum", pa.float64()),  # B
        ("surprisal_mean", pa.float64()),  # b = B / T
        ("concentration", pa.float64()),  # Σ_t w_t², w_t = b_t / B
        ("oracle_nll", pa.float64()),
        ("oracle_nll_given_s", pa.float64()),
        ("oracle_info", pa.float64()),
        ("strategy", pa.int16()),
    ]
)


class DataError(ValueError):
    """An input file that is missing, unreadable, or not what its consumer expects."""


class ProvenanceError(DataError):
    """Tables and a checkpoint that do not come from the same base model."""


@contextlib.contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside `path`; move it into place only if the block succeeds."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        yield Path(tmp)
        os.chmod(tmp, FILE_MODE)  # mkstemp creates 0600; outputs are meant to be shared
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def run_dir(root: str | Path, variant: str, seed: int) -> Path:
    """`<root>/<variant>/seed<seed>`: where one (variant, seed) run keeps its files."""
    return Path(root) / variant / f"seed{seed}"


def write_json(obj: object, path: str | Path) -> None:
    """Write `obj` as indented JSON, atomically; NaN is refused (it is not JSON)."""
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(obj, indent=2, sort_keys=False, allow_nan=False) + "\n")


def read_json(path: str | Path) -> dict:
    path = Path(path)
    if not path.is_file():
        raise DataError(f"{path}: file not found")
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError as err:
        raise DataError(f"{path}: not valid JSON ({err})") from err


def write_table(
    table: pa.Table, path: str | Path, schema: pa.Schema, metadata: Mapping[str, str] | None = None
) -> None:
    """Write `table` as zstd Parquet with exactly `schema`'s columns, atomically."""
    if table.schema.names != schema.names:
        raise DataError(
            f"{path}: columns {table.schema.names} do not match the schema {schema.names}"
        )
    table = table.cast(schema).replace_schema_metadata(
        {k: str(v) for k, v in (metadata or {}).items()}
    )
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp, compression=COMPRESSION)


def read_table(path: str | Path, schema: pa.Schema, columns: list[str] | None = None) -> pa.Table:
    """Read a Parquet file and check it has `schema` (names and types); raise `DataError` if not."""
    path = Path(path)
    if not path.is_file():
        raise DataError(f"{path}: file not found")
    try:
        found = pq.read_schema(path)
        table = pq.read_table(path, columns=columns)
    except (pa.ArrowException, OSError) as err:
        raise DataError(f"{path}: not a readable Parquet file ({err})") from err
    for name in schema.names:
        if name not in found.names:
            raise DataError(f"{path}: missing column {name!r} (found {found.names})")
        expected, actual = schema.field(name).type, found.field(name).type
        if expected != actual:
            raise DataError(f"{path}: column {name!r} has type {actual}, expected {expected}")
    extra = sorted(set(found.names) - set(schema.names))
    if extra:
        raise DataError(f"{path}: unexpected columns {extra}")
    return table


def table_metadata(path: str | Path) -> dict[str, str]:
    """The key/value metadata of a Parquet file, decoded."""
    raw = pq.read_schema(path).metadata or {}
    return {k.decode(): v.decode() for k, v in raw.items()}


def sha256_file(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def check_provenance(what: str, recorded: str | None, checkpoint: str | Path) -> str:
    """Stop unless `recorded` (the sha256 `what` claims) is the sha256 of `checkpoint`."""
    actual = sha256_file(checkpoint)
    if recorded is None:
        raise ProvenanceError(f"{what}: records no base checkpoint sha256 (key {BASE_SHA_KEY})")
    if recorded != actual:
        raise ProvenanceError(
            f"{what} was computed with base checkpoint sha256 {recorded}, "
            f"but {checkpoint} has sha256 {actual}: rerun the surprisal stage"
        )
    return actual


def list_array(padded: np.ndarray, lengths: np.ndarray) -> pa.ListArray:
    """Variable-length rows from a right-padded (N, L) array and its lengths (N,)."""
    lengths = np.asarray(lengths, dtype=np.int64)
    keep = np.arange(padded.shape[1])[None, :] < lengths[:, None]
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    return pa.ListArray.from_arrays(pa.array(offsets), pa.array(padded[keep]))


def padded(
    column: pa.ChunkedArray | pa.ListArray, pad: float, width: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Inverse of `list_array`: (N, width) right-padded with `pad`, and the lengths (N,)."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    lengths = np.asarray(column.value_lengths().to_numpy(zero_copy_only=False), dtype=np.int64)
    values = column.flatten().to_numpy(zero_copy_only=False)
    width = int(lengths.max(initial=0)) if width is None else width
    if lengths.max(initial=0) > width:
        raise DataError(f"a row has {lengths.max()} entries, more than the frame width {width}")
    out = np.full((len(lengths), width), pad, dtype=values.dtype if values.size else np.float64)
    keep = np.arange(width)[None, :] < lengths[:, None]
    out[keep] = values
    return out, lengths


EVAL_SCHEMA = pa.schema(
    [
        ("example_id", pa.int64()),
        ("variant", pa.string()),
        ("seed", pa.int32()),
        ("strategy", pa.int16()),
        ("n_tokens", pa.int32()),  # T_i
        ("surprisal_sum", pa.float64()),  # B_i, frozen base
        ("surprisal_mean", pa.float64()),  # b_i = B_i / T_i
        ("nll_post", pa.float64()),  # L_i, z ~ q(z|x,y), mean over S samples
        ("nll_post_mean", pa.float64()),  # ℓ̄_i = L_i / T_i
        ("nll_prior", pa.float64()),  # z ~ p(z|x)
        ("nll_shuffled", pa.float64()),  # z from another example's posterior
        ("nll_zero", pa.float64()),  # z = 0
        ("kl", pa.float64()),  # KL(q(z|x,y) ‖ p(z|x)), nats
        ("log_lik_iw", pa.float64()),  # log p̂_K(y|x)
        ("oracle_nll", pa.float64()),  # −log p(y|x)
        ("oracle_info", pa.float64()),  # I*
        ("gain", pa.float64()),  # B_i − L_i
        ("token_gain", pa.list_(pa.float64())),  # b_t − ℓ_t on the y tokens and EOS
        (
            "revealed",
            pa.list_(pa.bool_()),
        ),  # oracle per-token information > evaluate.reveal_min_nats
    ]
)
