"""The mismatch read in zgain.results.load.bases: a base without a per-token oracle has no mismatch
rows, and a missing surprisal table is one line naming the stage that writes it."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from zgain.core.errors import DataError
from zgain.core.io import write_table
from zgain.results.load.bases import base_mismatch, mismatch_table
from zgain.results.registry import MISMATCH


def test_pairs_data_without_a_token_oracle_gives_no_rows(tmp_path: Path) -> None:
    table = pa.table(
        {
            "split": ["test", "test"],
            "position": pa.array([0, 1], pa.int32()),
            "surprisal": pa.array([1.0, 2.0], pa.float32()),
            "oracle_surprisal": pa.array([None, None], pa.float64()),
        }
    )
    write_table(table, tmp_path / "tokens.parquet", table.schema)
    rows = base_mismatch(tmp_path, 0)
    assert rows.empty and tuple(rows.columns) == MISMATCH.columns
    assert mismatch_table([rows]).empty


def test_a_missing_token_table_names_the_surprisal_stage(tmp_path: Path) -> None:
    with pytest.raises(DataError, match=r"tokens\.parquet not found: run `dvc repro surprisal@3`"):
        base_mismatch(tmp_path, 3)
