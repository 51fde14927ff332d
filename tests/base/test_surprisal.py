"""Facts about the surprisal tables and how they are computed from the frozen base.

See docs/method.md#the-base-model-and-its-surprisal.
"""

from __future__ import annotations

import hashlib
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
import torch
import torch.nn.functional as F

from zgain.base.model import load_base
from zgain.base.surprisal import example_stats
from zgain.core.io import BASE_SHA_KEY
from zgain.core.sequences import pack
from zgain.params import Params
from zgain.world.splits import SPLITS, load_split
from zgain.world.synthetic import World

TOKENS_COLUMNS = ["example_id", "split", "position", "token", "surprisal", "oracle_surprisal"]
EXAMPLES_COLUMNS = [
    "example_id",
    "split",
    "n_tokens",
    "surprisal_sum",
    "surprisal_mean",
    "concentration",
    "oracle_nll",
    "oracle_nll_given_s",
    "oracle_info",
    "strategy",
]
RECOMPUTE_TOL = 1e-5  # nats: float32 forward passes of the same model in different batchings
SUM_TOL = 1e-9  # float64 sums of the same float32 values in a different order
N_STANDARD_ERRORS = 3.0
EXAMPLES_PER_SPLIT = 5


def _surprisal_file(params: Params, name: str) -> Path:
    return Path(params.paths.base(0).surprisal_dir) / name


def _tokens(params: Params) -> pd.DataFrame:
    return pq.read_table(_surprisal_file(params, "tokens.parquet")).to_pandas()


def _examples(params: Params) -> pd.DataFrame:
    return pq.read_table(_surprisal_file(params, "examples.parquet")).to_pandas()


@pytest.mark.parametrize("split_name", SPLITS)
def test_token_surprisal_matches_an_independent_forward_pass(tiny_pipeline, split_name):
    params = tiny_pipeline
    world = World.from_params(params.data)
    vocab = world.vocab
    split = load_split(Path(params.paths.synthetic_dir) / f"{split_name}.parquet", world)
    picked = np.linspace(0, len(split) - 1, EXAMPLES_PER_SPLIT).astype(int)
    batch = pack(
        split.x[picked],
        split.x_len[picked],
        split.y[picked],
        split.y_len[picked],
        vocab=vocab,
        max_x_len=world.length_max,
        max_y_len=world.max_y_len,
    )
    model = load_base(params.paths.base(0).base_model)
    with torch.no_grad():
        logits = model(batch.decoder_input).double()  # (B, X+T, V)
    tokens = _tokens(params).set_index(["example_id", "position"]).sort_index()
    for row, i in enumerate(picked):
        n = int(split.y_len[i])
        # Targets y_0..y_{n-1}, EOS; the logit at X + t predicts target t.
        targets = torch.tensor([*split.y[i, :n].tolist(), vocab.eos])
        expected = F.cross_entropy(
            logits[row, world.length_max : world.length_max + n + 1], targets, reduction="none"
        ).numpy()
        stored = tokens.loc[int(split.example_id[i])]
        assert stored.index.tolist() == list(range(n + 1))
        assert stored["token"].tolist() == targets.tolist()
        assert (stored["split"] == split_name).all()
        np.testing.assert_allclose(stored["surprisal"].to_numpy(), expected, atol=RECOMPUTE_TOL)


def test_example_columns_equal_a_groupby_of_the_token_table(tiny_pipeline):
    tokens = _tokens(tiny_pipeline)
    b = tokens["surprisal"].astype(np.float64)
    tokens = tokens.assign(b=b, total=b.groupby(tokens["example_id"]).transform("sum"))
    tokens["share_sq"] = (tokens["b"] / tokens["total"]) ** 2
    grouped = tokens.groupby("example_id").agg(
        n_tokens=("b", "size"), total=("b", "sum"), concentration=("share_sq", "sum")
    )
    examples = _examples(tiny_pipeline).set_index("example_id").sort_index()
    assert examples.index.is_unique
    assert examples.index.tolist() == grouped.index.tolist()
    np.testing.assert_array_equal(examples["n_tokens"], grouped["n_tokens"])
    np.testing.assert_allclose(examples["surprisal_sum"], grouped["total"], rtol=SUM_TOL)
    np.testing.assert_allclose(
        examples["surprisal_mean"], grouped["total"] / grouped["n_tokens"], rtol=SUM_TOL
    )
    np.testing.assert_allclose(examples["concentration"], grouped["concentration"], rtol=SUM_TOL)


def test_every_example_of_every_split_is_scored_once(tiny_pipeline):
    examples = _examples(tiny_pipeline)
    sizes = tiny_pipeline.data.sizes()
    assert examples.groupby("split").size().to_dict() == sizes
    assert examples["example_id"].is_unique


@pytest.mark.parametrize(
    ("name", "columns"),
    [("tokens.parquet", TOKENS_COLUMNS), ("examples.parquet", EXAMPLES_COLUMNS)],
)
def test_tables_have_the_spec_columns_zstd_and_the_base_sha(tiny_pipeline, name, columns):
    path = _surprisal_file(tiny_pipeline, name)
    meta = pq.ParquetFile(path).metadata
    assert pq.read_schema(path).names == columns
    compressions = {
        meta.row_group(g).column(c).compression
        for g in range(meta.num_row_groups)
        for c in range(meta.num_columns)
    }
    assert compressions == {"ZSTD"}
    expected_sha = hashlib.sha256(
        Path(tiny_pipeline.paths.base(0).base_model).read_bytes()
    ).hexdigest()
    assert meta.metadata[BASE_SHA_KEY.encode()].decode() == expected_sha


def test_oracle_surprisal_is_copied_from_the_synthetic_data(tiny_pipeline):
    tokens = _tokens(tiny_pipeline).sort_values(["example_id", "position"])
    synthetic = pd.concat(
        pq.read_table(Path(tiny_pipeline.paths.synthetic_dir) / f"{s}.parquet")
        .select(["example_id", "oracle_surprisal"])
        .to_pandas()
        for s in SPLITS
    )
    exploded = synthetic.explode("oracle_surprisal").sort_values("example_id", kind="stable")
    assert tokens["example_id"].tolist() == exploded["example_id"].tolist()
    np.testing.assert_array_equal(
        tokens["oracle_surprisal"].to_numpy(), exploded["oracle_surprisal"].to_numpy(np.float64)
    )


def test_base_cross_entropy_is_not_below_the_oracle_entropy(tiny_pipeline):
    """E[B − (−log p(y|x))] is a KL divergence, so ≥ 0 up to sampling noise on held-out data."""
    examples = _examples(tiny_pipeline)
    held_out = examples[examples["split"].isin(["val", "test"])]
    excess = held_out["surprisal_sum"] - held_out["oracle_nll"]
    standard_error = excess.std(ddof=1) / math.sqrt(len(excess))
    assert excess.mean() >= -N_STANDARD_ERRORS * standard_error


def test_example_stats_on_a_hand_example():
    surprisal = np.array([[1.0, 3.0, 99.0], [2.0, 2.0, 2.0]], dtype=np.float32)
    mask = np.array([[True, True, False], [True, True, True]])
    stats = example_stats(surprisal, mask)
    np.testing.assert_array_equal(stats["n_tokens"], [2, 3])
    np.testing.assert_allclose(stats["surprisal_sum"], [4.0, 6.0])
    np.testing.assert_allclose(stats["surprisal_mean"], [2.0, 2.0])
    # (1/4)² + (3/4)² and 3 · (1/3)²: uniform shares give 1/T.
    np.testing.assert_allclose(stats["concentration"], [0.625, 1.0 / 3.0])


def test_example_stats_refuses_zero_total_surprisal():
    surprisal = np.array([[0.0, 0.0], [1.0, 1.0]])
    mask = np.ones((2, 2), dtype=bool)
    with pytest.raises(ValueError, match="zero total surprisal"):
        example_stats(surprisal, mask)
