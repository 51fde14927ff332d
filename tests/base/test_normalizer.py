"""Facts about the global normalizer N = E[b] over the train split.

See docs/method.md#the-base-model-and-its-surprisal.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from zgain.base.normalizer import compute_normalizer, mean_surprisal
from zgain.base.surprisal import example_stats
from zgain.base.tables import SurprisalTables, read_surprisal_tables
from zgain.core.errors import DataError

TRAIN = "train"
SCALE = 10.0  # factor applied to the surprisal of edited rows


def _tables(params) -> SurprisalTables:
    return read_surprisal_tables(params.paths.base(0).surprisal_dir)


def _edited(tables: SurprisalTables, split: str | None, *, drop_train: bool = False):
    """The tables with the examples of `split` scaled (or the train examples dropped).

    In memory, past the reader's checks: these tests are about the normalizer's arithmetic.
    """
    frame = tables.examples.to_pandas()
    if drop_train:
        frame = frame[frame["split"] != TRAIN]
    if split is not None:
        rows = frame["split"] == split
        frame.loc[rows, "surprisal_mean"] *= SCALE
        frame.loc[rows, "surprisal_sum"] *= SCALE
        frame.loc[rows, "n_tokens"] += 1
    return tables._replace(examples=pa.Table.from_pandas(frame, preserve_index=False))


def test_normalizer_json_is_the_train_mean_with_counts(tiny_pipeline):
    tables = _tables(tiny_pipeline)
    examples = tables.examples.to_pandas()
    train = examples[examples["split"] == TRAIN]
    saved = json.loads(Path(tiny_pipeline.paths.base(0).normalizer).read_text())
    assert saved["mean_surprisal"] == pytest.approx(train["surprisal_mean"].mean(), rel=1e-12)
    assert saved["mean_surprisal_sum"] == pytest.approx(train["surprisal_sum"].mean(), rel=1e-12)
    assert saved["n_examples"] == len(train) == tiny_pipeline.data.n_train
    assert saved["n_tokens"] == int(train["n_tokens"].sum())
    assert saved["split"] == TRAIN
    assert saved["base_sha256"] == tables.base_sha256


@pytest.mark.parametrize("split", ["val", "test"])
def test_held_out_rows_do_not_move_the_normalizer(tiny_pipeline, split):
    tables = _tables(tiny_pipeline)
    assert compute_normalizer(_edited(tables, split)) == compute_normalizer(tables)


def test_train_rows_move_the_normalizer(tiny_pipeline):
    tables = _tables(tiny_pipeline)
    original = compute_normalizer(tables)
    edited = compute_normalizer(_edited(tables, TRAIN))
    assert edited.mean_surprisal == pytest.approx(SCALE * original.mean_surprisal)
    assert edited.mean_surprisal_sum == pytest.approx(SCALE * original.mean_surprisal_sum)
    assert edited.n_tokens == original.n_tokens + original.n_examples


def test_a_table_without_train_rows_is_refused(tiny_pipeline):
    tables = _edited(_tables(tiny_pipeline), None, drop_train=True)
    with pytest.raises(DataError, match=f"{tables.examples_path}: no rows with split == 'train'"):
        compute_normalizer(tables)


def test_train_mean_is_a_mean_of_ratios_not_a_ratio_of_sums(tiny_pipeline):
    """N = E[b_i] (a mean of token means), which differs from Σ B_i / Σ T_i when lengths vary."""
    tables = _tables(tiny_pipeline)
    table = tables.examples
    train = table.filter(pc.equal(table["split"], TRAIN))
    ratio_of_sums = pc.sum(train["surprisal_sum"]).as_py() / pc.sum(train["n_tokens"]).as_py()
    normalizer = compute_normalizer(tables)
    assert normalizer.mean_surprisal != pytest.approx(ratio_of_sums, rel=1e-9)
    assert normalizer.mean_surprisal == pytest.approx(
        pc.mean(train["surprisal_mean"]).as_py(), rel=1e-12
    )


def test_the_normalizer_weighs_examples_not_tokens() -> None:
    # b_t = 1 over 1 token and 3, 3, 3 over 3 tokens: E[b] = (1 + 3) / 2 = 2, where the mean over
    # pooled tokens would be 10 / 4 = 2.5.
    surprisal = np.array([[1.0, 0.0, 0.0], [3.0, 3.0, 3.0]])
    mask = np.array([[True, False, False], [True, True, True]])
    stats = example_stats(surprisal, mask)
    assert mean_surprisal(pa.array(stats["surprisal_mean"])) == 2.0
