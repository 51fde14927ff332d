"""Facts about the global normalizer N = E[b] over the train split.

See docs/method.md#the-base-model-and-its-surprisal.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from zgain.base.normalizer import compute_normalizer
from zgain.base.schema import EXAMPLES_SCHEMA
from zgain.core.errors import DataError
from zgain.core.io import BASE_SHA_KEY, read_table, table_metadata, write_table

TRAIN = "train"
SCALE = 10.0  # factor applied to the surprisal of edited rows


def _examples_path(params) -> Path:
    return Path(params.paths.surprisal_dir) / "examples.parquet"


def _edited_copy(source: Path, dest: Path, split: str | None, *, drop_train: bool = False) -> Path:
    """A copy of examples.parquet with the rows of `split` scaled (or the train rows dropped)."""
    table = read_table(source, EXAMPLES_SCHEMA)
    frame = table.to_pandas()
    if drop_train:
        frame = frame[frame["split"] != TRAIN]
    if split is not None:
        rows = frame["split"] == split
        frame.loc[rows, "surprisal_mean"] *= SCALE
        frame.loc[rows, "surprisal_sum"] *= SCALE
        frame.loc[rows, "n_tokens"] += 1
    edited = pa.Table.from_pandas(frame, preserve_index=False)
    write_table(edited, dest, EXAMPLES_SCHEMA, table_metadata(source))
    return dest


def test_normalizer_json_is_the_train_mean_with_counts(tiny_pipeline):
    examples = read_table(_examples_path(tiny_pipeline), EXAMPLES_SCHEMA).to_pandas()
    train = examples[examples["split"] == TRAIN]
    saved = json.loads(Path(tiny_pipeline.paths.normalizer).read_text())
    assert saved["mean_surprisal"] == pytest.approx(train["surprisal_mean"].mean(), rel=1e-12)
    assert saved["mean_surprisal_sum"] == pytest.approx(train["surprisal_sum"].mean(), rel=1e-12)
    assert saved["n_examples"] == len(train) == tiny_pipeline.data.n_train
    assert saved["n_tokens"] == int(train["n_tokens"].sum())
    assert saved["split"] == TRAIN
    assert saved["base_sha256"] == table_metadata(_examples_path(tiny_pipeline))[BASE_SHA_KEY]


@pytest.mark.parametrize("split", ["val", "test"])
def test_held_out_rows_do_not_move_the_normalizer(tiny_pipeline, tmp_path, split):
    source = _examples_path(tiny_pipeline)
    edited = _edited_copy(source, tmp_path / "examples.parquet", split)
    assert compute_normalizer(edited) == compute_normalizer(source)


def test_train_rows_move_the_normalizer(tiny_pipeline, tmp_path):
    source = _examples_path(tiny_pipeline)
    original = compute_normalizer(source)
    edited = compute_normalizer(_edited_copy(source, tmp_path / "examples.parquet", TRAIN))
    assert edited.mean_surprisal == pytest.approx(SCALE * original.mean_surprisal)
    assert edited.mean_surprisal_sum == pytest.approx(SCALE * original.mean_surprisal_sum)
    assert edited.n_tokens == original.n_tokens + original.n_examples


def test_a_table_without_train_rows_is_refused(tiny_pipeline, tmp_path):
    path = _edited_copy(
        _examples_path(tiny_pipeline), tmp_path / "examples.parquet", None, drop_train=True
    )
    with pytest.raises(DataError, match="no rows with split == 'train'"):
        compute_normalizer(path)


def test_a_table_without_the_base_sha_is_refused(tiny_pipeline, tmp_path):
    table = read_table(_examples_path(tiny_pipeline), EXAMPLES_SCHEMA)
    path = tmp_path / "examples.parquet"
    write_table(table, path, EXAMPLES_SCHEMA)
    assert BASE_SHA_KEY not in table_metadata(path)
    with pytest.raises(DataError, match=BASE_SHA_KEY):
        compute_normalizer(path)


def test_train_mean_is_a_mean_of_ratios_not_a_ratio_of_sums(tiny_pipeline):
    """N = E[b_i] (a mean of token means), which differs from Σ B_i / Σ T_i when lengths vary."""
    table = read_table(_examples_path(tiny_pipeline), EXAMPLES_SCHEMA)
    train = table.filter(pc.equal(table["split"], TRAIN))
    ratio_of_sums = pc.sum(train["surprisal_sum"]).as_py() / pc.sum(train["n_tokens"]).as_py()
    normalizer = compute_normalizer(_examples_path(tiny_pipeline))
    assert normalizer.mean_surprisal != pytest.approx(ratio_of_sums, rel=1e-9)
    assert normalizer.mean_surprisal == pytest.approx(
        pc.mean(train["surprisal_mean"]).as_py(), rel=1e-12
    )
