"""Tests for the `generate` stage: determinism, the Parquet contract, oracle columns
that agree with each other, and readers that reject damaged files with their path."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from stages.generate import run
from zgain.core.errors import DataError
from zgain.core.io import padded, read_table
from zgain.params import DataParams
from zgain.world.splits import SPLITS, SYNTHETIC_SCHEMA, load_split, split_seed
from zgain.world.synthetic import World, sample

TOL = 1e-9


def split_path(out_dir: Path, split: str) -> Path:
    return out_dir / f"{split}.parquet"


def read(out_dir: Path, split: str) -> pa.Table:
    return read_table(split_path(out_dir, split), SYNTHETIC_SCHEMA)


@pytest.fixture
def generated(tiny_data_params: DataParams, tmp_path: Path) -> Path:
    out_dir = tmp_path / "data" / "synthetic"  # created by the stage
    run(tiny_data_params, out_dir)
    return out_dir


def test_writes_one_file_per_split_and_nothing_else(generated: Path) -> None:
    assert sorted(p.name for p in generated.iterdir()) == sorted(f"{s}.parquet" for s in SPLITS)
    assert not list(generated.rglob("*.tmp"))


def test_rerun_gives_identical_tables(tiny_data_params: DataParams, tmp_path: Path) -> None:
    run(tiny_data_params, tmp_path / "a")
    run(tiny_data_params, tmp_path / "b")
    for split in SPLITS:
        assert read(tmp_path / "a", split).equals(read(tmp_path / "b", split)), split


def test_rerun_into_the_same_dir_replaces_the_files(generated: Path, tiny_data_params) -> None:
    before = {split: read(generated, split) for split in SPLITS}
    run(tiny_data_params, generated)
    for split in SPLITS:
        assert read(generated, split).equals(before[split])
    assert not list(generated.rglob("*.tmp"))


def test_schema_is_the_synthetic_schema(generated: Path) -> None:
    for split in SPLITS:
        assert pq.read_schema(split_path(generated, split)).equals(SYNTHETIC_SCHEMA)


def test_sizes_splits_and_unique_example_ids(generated: Path, tiny_data_params) -> None:
    sizes = tiny_data_params.sizes()
    ids = []
    for split in SPLITS:
        table = read(generated, split)
        assert table.num_rows == sizes[split]
        assert set(table["split"].to_pylist()) == {split}
        ids.append(table["example_id"].to_numpy())
    all_ids = np.concatenate(ids)
    assert len(np.unique(all_ids)) == len(all_ids)
    np.testing.assert_array_equal(all_ids, np.arange(sum(sizes.values())))  # train, val, test


def test_load_split_round_trips_the_sample(generated: Path, tiny_data_params) -> None:
    world = World.from_params(tiny_data_params)
    sizes = tiny_data_params.sizes()
    for split in SPLITS:
        rng = np.random.default_rng(split_seed(tiny_data_params.seed, split))
        drawn = sample(world, sizes[split], rng)
        loaded = load_split(split_path(generated, split), world.frames)
        assert len(loaded) == sizes[split]
        np.testing.assert_array_equal(loaded.x, drawn.x)
        np.testing.assert_array_equal(loaded.x_len, drawn.x_len)
        np.testing.assert_array_equal(loaded.y, drawn.y)
        np.testing.assert_array_equal(loaded.y_len, drawn.y_len)
        np.testing.assert_array_equal(loaded.strategy, drawn.strategy)
        np.testing.assert_array_equal(loaded.oracle_nll, drawn.oracle.nll)
        np.testing.assert_array_equal(loaded.oracle_info, drawn.oracle.info)
        np.testing.assert_array_equal(loaded.oracle_surprisal, drawn.oracle.token_surprisal)
        np.testing.assert_array_equal(loaded.oracle_token_info, drawn.oracle.token_info)


def test_world_has_varied_lengths(generated: Path, tiny_data_params) -> None:
    """The fixture covers what the stage must handle: several x lengths, y longer than any x."""
    loaded = load_split(split_path(generated, "train"), World.from_params(tiny_data_params).frames)
    assert len(np.unique(loaded.x_len)) > 1
    assert loaded.y_len.max() > tiny_data_params.length_max


def test_another_seed_changes_the_data(tiny_data_params: DataParams, tmp_path: Path) -> None:
    run(tiny_data_params, tmp_path / "a")
    run(tiny_data_params.model_copy(update={"seed": tiny_data_params.seed + 1}), tmp_path / "b")
    for split in SPLITS:
        a, b = read(tmp_path / "a", split), read(tmp_path / "b", split)
        assert not a.equals(b)
        assert a["x"].to_pylist() != b["x"].to_pylist()


def test_resizing_one_split_leaves_the_others(tiny_data_params: DataParams, tmp_path) -> None:
    run(tiny_data_params, tmp_path / "a")
    run(tiny_data_params.model_copy(update={"n_val": tiny_data_params.n_val + 7}), tmp_path / "b")
    for split in ("train", "test"):
        a, b = read(tmp_path / "a", split), read(tmp_path / "b", split)
        for column in ("x", "y", "strategy", "oracle_nll"):
            assert a[column].equals(b[column]), (split, column)


def test_oracle_columns_agree(generated: Path, tiny_data_params) -> None:
    k = len(tiny_data_params.transforms)
    for split in SPLITS:
        table = read(generated, split)
        nll = table["oracle_nll"].to_numpy()
        nll_given_s = table["oracle_nll_given_s"].to_numpy()
        info = table["oracle_info"].to_numpy()
        np.testing.assert_allclose(info, nll - nll_given_s, rtol=0, atol=1e-12)
        assert info.min() >= -TOL
        assert (info <= nll + TOL).all()

        surprisal, n_tokens = padded(table["oracle_surprisal"], 0.0)
        token_info, _ = padded(table["oracle_token_info"], 0.0)
        y_len = table["y"].combine_chunks().value_lengths().to_numpy()
        np.testing.assert_array_equal(n_tokens, y_len + 1)  # the y tokens, then EOS
        np.testing.assert_allclose(surprisal.sum(axis=1), nll, rtol=0, atol=TOL)
        np.testing.assert_allclose(token_info.sum(axis=1), info, rtol=0, atol=TOL)

        for column in ("prior", "posterior"):
            probs, widths = padded(table[column], np.nan)
            assert (widths == k).all()
            assert (probs >= 0).all()
            np.testing.assert_allclose(probs.sum(axis=1), 1.0, rtol=0, atol=TOL)
        prior, _ = padded(table["prior"], np.nan)
        entropy = -(prior * np.log(prior)).sum(axis=1)
        np.testing.assert_allclose(table["prior_entropy"].to_numpy(), entropy, rtol=1e-12)


# --- readers reject damaged files ---------------------------------------------------------


def test_truncated_parquet_is_a_data_error(generated: Path, tmp_path: Path) -> None:
    path = tmp_path / "truncated.parquet"
    data = split_path(generated, "train").read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(DataError, match="^" + re.escape(f"{path}: not a readable Parquet file")):
        read_table(path, SYNTHETIC_SCHEMA)


def test_missing_column_is_a_data_error(generated: Path, tmp_path: Path, tiny_data_params) -> None:
    path = tmp_path / "no_info.parquet"
    pq.write_table(read(generated, "val").drop_columns(["oracle_info"]), path)
    with pytest.raises(DataError, match="^" + re.escape(f"{path}: missing column 'oracle_info'")):
        read_table(path, SYNTHETIC_SCHEMA)
    with pytest.raises(DataError, match=re.escape("missing column 'oracle_info'")):
        load_split(path, World.from_params(tiny_data_params).frames)


def test_mistyped_column_is_a_data_error(generated: Path, tmp_path: Path) -> None:
    path = tmp_path / "wide_strategy.parquet"
    table = read(generated, "val")
    index = table.schema.get_field_index("strategy")
    table = table.set_column(index, "strategy", table["strategy"].cast(pa.int64()))
    pq.write_table(table, path)
    message = f"{path}: column 'strategy' has type int64, expected int16"
    with pytest.raises(DataError, match="^" + re.escape(message)):
        read_table(path, SYNTHETIC_SCHEMA)


def test_missing_file_is_a_data_error(tmp_path: Path) -> None:
    path = tmp_path / "absent.parquet"
    with pytest.raises(DataError, match="^" + re.escape(f"{path}: file not found")):
        read_table(path, SYNTHETIC_SCHEMA)
