"""Atomic writes, checked Parquet and JSON reads, and provenance checks.

Every table the pipeline writes has its schema beside the code that produces it; readers check
the file against it here, so a corrupted, truncated or mismatched file fails with its path and
the problem (docs/method.md#the-base-model-and-its-surprisal for the provenance contract).

Every write goes to a temporary named `.<name>.<random>.zgain-tmp` beside its target and is
renamed into place only once complete. `.gitignore` and `.dvcignore` ignore that pattern, so a
write killed half-way changes no hash; each stage sweeps its own outputs' temporaries when it
starts (`sweep_temporaries`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from zgain.core.errors import DataError, ProvenanceError

BASE_SHA_KEY = "zgain.base_sha256"  # Parquet metadata key: sha256 of the base checkpoint used
COMPRESSION = "zstd"
_CHUNK = 1 << 20  # bytes read at a time when hashing
FILE_MODE = 0o644  # outputs are meant to be shared
DIR_MODE = 0o755
TMP_SUFFIX = ".zgain-tmp"  # .gitignore and .dvcignore ignore `.*.zgain-tmp`


def _temporary_name(path: Path) -> str:
    return f".{path.name}."


@contextlib.contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside `path`; move it into place only if the block succeeds."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=_temporary_name(path), suffix=TMP_SUFFIX)
    os.close(fd)
    try:
        yield Path(tmp)
        os.chmod(tmp, FILE_MODE)  # mkstemp creates 0600; outputs are meant to be shared
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


@contextlib.contextmanager
def atomic_dir(path: str | Path) -> Iterator[Path]:
    """Yield an empty temporary directory beside `path`; install its entries only on success.

    Each top-level entry the block wrote replaces the same-named entry of `path` (a file by one
    rename, a directory by two); entries of `path` the block did not write are left alone. If
    the block fails, `path` is untouched and the temporary directory is removed.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    built = Path(tempfile.mkdtemp(dir=path.parent, prefix=_temporary_name(path), suffix=TMP_SUFFIX))
    try:
        yield built
        path.mkdir(exist_ok=True)
        retired = Path(tempfile.mkdtemp(dir=built, prefix=".retired."))
        for entry in sorted(built.iterdir()):
            if entry == retired:
                continue
            target = path / entry.name
            if entry.is_dir():
                os.chmod(entry, DIR_MODE)
                if target.is_dir():
                    target.rename(retired / entry.name)
            os.replace(entry, target)
    finally:
        shutil.rmtree(built, ignore_errors=True)


@contextlib.contextmanager
def replaced_dir(path: str | Path) -> Iterator[Path]:
    """Yield an empty temporary directory beside `path`; on success it becomes `path` whole.

    Unlike `atomic_dir`, nothing of the old `path` survives: its entries are retired in one
    rename and removed. If the block fails, `path` is untouched and the temporary is removed.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    built = Path(tempfile.mkdtemp(dir=path.parent, prefix=_temporary_name(path), suffix=TMP_SUFFIX))
    retired = built.with_name(built.name.replace(TMP_SUFFIX, ".retired" + TMP_SUFFIX))
    try:
        yield built
        os.chmod(built, DIR_MODE)
        if path.exists():
            path.rename(retired)
        try:
            built.rename(path)
        except BaseException:
            if not path.exists() and retired.exists():
                retired.rename(path)  # put the old one back
            raise
    finally:
        shutil.rmtree(built, ignore_errors=True)
        shutil.rmtree(retired, ignore_errors=True)


def sweep_temporaries(*outputs: str | Path) -> list[Path]:
    """Remove what interrupted atomic writes left for `outputs` (files or directories).

    A stage calls this first, for each of its outputs: the temporaries of a file output sit
    beside it; those of a directory output beside it or anywhere inside it. Returns the removed
    paths.
    """
    found: set[Path] = set()
    for output in map(Path, outputs):
        if output.parent.is_dir():
            found.update(output.parent.glob(f"{_temporary_name(output)}*{TMP_SUFFIX}"))
        if output.is_dir():
            found.update(output.rglob(f".*{TMP_SUFFIX}"))
    removed = []
    for leftover in sorted(found):
        if leftover.is_dir() and not leftover.is_symlink():
            shutil.rmtree(leftover, ignore_errors=True)
        else:
            with contextlib.suppress(FileNotFoundError):
                leftover.unlink()
        removed.append(leftover)
    return removed


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
    """Read a Parquet file and check it has `schema` (names and types); raise `DataError` if not.

    The file's key/value metadata comes with the table (`table_metadata(table)`).
    """
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


def table_metadata(source: pa.Table | str | Path) -> dict[str, str]:
    """The key/value metadata of a table read by `read_table`, or of a Parquet file, decoded.

    A file that is missing or not Parquet raises `DataError` naming its path.
    """
    if isinstance(source, pa.Table):
        raw = source.schema.metadata or {}
    else:
        path = Path(source)
        if not path.is_file():
            raise DataError(f"{path}: file not found")
        try:
            raw = pq.read_schema(path).metadata or {}
        except (pa.ArrowException, OSError) as err:
            raise DataError(f"{path}: not a readable Parquet file ({err})") from err
    return {k.decode(): v.decode() for k, v in raw.items()}


def sha256_file(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def check_provenance(
    what: str,
    recorded: str | None,
    checkpoint: str | Path,
    actual: str | None = None,
    *,
    remedy: str,
) -> str:
    """Stop unless `recorded` (the sha256 `what` claims) is the sha256 of `checkpoint`.

    actual: the checkpoint's sha256 when the caller has hashed it already (hashed here if not);
    remedy: what the message tells the user to do about a mismatch.
    """
    actual = actual or sha256_file(checkpoint)
    if recorded is None:
        raise ProvenanceError(f"{what}: records no base checkpoint sha256 (key {BASE_SHA_KEY})")
    if recorded != actual:
        raise ProvenanceError(
            f"{what} was computed with base checkpoint sha256 {recorded}, "
            f"but {checkpoint} has sha256 {actual}: {remedy}"
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
