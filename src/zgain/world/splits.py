"""Synthetic splits on disk: from a `Sample` to a Parquet table and back to padded arrays."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import numpy as np
import pyarrow as pa

from zgain.core.errors import DataError
from zgain.core.io import list_array, padded, read_table
from zgain.world import portable
from zgain.world.frames import Frames
from zgain.world.synthetic import Sample

SPLITS = ("train", "val", "test")

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


def split_seed(seed: int, split: str) -> np.random.SeedSequence:
    """An independent random stream per split, so resizing one split leaves the others intact."""
    return np.random.SeedSequence([seed, SPLITS.index(split)])


def first_example_id(sizes: dict[str, int], split: str) -> int:
    """Example ids are unique across splits: train first, then val, then test."""
    return sum(sizes[s] for s in SPLITS[: SPLITS.index(split)])


def sample_table(sample: Sample, split: str, first_id: int) -> pa.Table:
    """The rows of one split in `SYNTHETIC_SCHEMA` (one row per example, per-token lists)."""
    n = len(sample.x_len)
    o = sample.oracle
    k = o.posterior.shape[1]
    n_tokens = sample.y_len + 1
    columns = {
        "example_id": pa.array(np.arange(first_id, first_id + n, dtype=np.int64)),
        "split": pa.array([split] * n),
        "x": list_array(sample.x, sample.x_len),
        "y": list_array(sample.y, sample.y_len),
        "strategy": pa.array(sample.strategy.astype(np.int16)),
        "prior": list_array(portable.exp(o.log_prior), np.full(n, k)),
        "posterior": list_array(o.posterior, np.full(n, k)),
        "oracle_nll": pa.array(o.nll),
        "oracle_nll_given_s": pa.array(o.nll_given_s_mean),
        "oracle_info": pa.array(o.info),
        "prior_entropy": pa.array(o.prior_entropy),
        "oracle_surprisal": list_array(o.token_surprisal, n_tokens),
        "oracle_token_info": list_array(o.token_info, n_tokens),
    }
    return pa.table(columns).cast(SYNTHETIC_SCHEMA)


class Split(NamedTuple):
    """One split as padded arrays (frames sized by the world, not by the split's longest row)."""

    example_id: np.ndarray  # (N,) int64
    x: np.ndarray  # (N, length_max) right-padded with PAD
    x_len: np.ndarray  # (N,)
    y: np.ndarray  # (N, max_y_len) right-padded with PAD
    y_len: np.ndarray  # (N,)
    strategy: np.ndarray  # (N,)
    oracle_nll: np.ndarray  # (N,)
    oracle_nll_given_s: np.ndarray  # (N,)
    oracle_info: np.ndarray  # (N,)
    oracle_surprisal: np.ndarray  # (N, T) 0-padded, T = max_y_len + 1
    oracle_token_info: np.ndarray  # (N, T) 0-padded
    strategy_prior: np.ndarray  # (N, K) p(s | x)
    strategy_posterior: np.ndarray  # (N, K) p(s | x, y)

    def __len__(self) -> int:
        return len(self.example_id)


def load_split(path: str | Path, frames: Frames) -> Split:
    """Read `{split}.parquet` into padded arrays whose widths are the frames."""
    table = read_table(path, SYNTHETIC_SCHEMA)
    x, x_len = padded(table["x"], frames.vocab.pad, frames.max_x_len)
    y, y_len = padded(table["y"], frames.vocab.pad, frames.max_y_len)
    t = frames.n_targets
    surprisal, _ = padded(table["oracle_surprisal"], 0.0, t)
    token_info, _ = padded(table["oracle_token_info"], 0.0, t)
    return Split(
        example_id=table["example_id"].to_numpy(),
        x=x.astype(np.int64),
        x_len=x_len,
        y=y.astype(np.int64),
        y_len=y_len,
        strategy=table["strategy"].to_numpy().astype(np.int64),
        oracle_nll=table["oracle_nll"].to_numpy(),
        oracle_nll_given_s=table["oracle_nll_given_s"].to_numpy(),
        oracle_info=table["oracle_info"].to_numpy(),
        oracle_surprisal=surprisal.astype(np.float64),
        oracle_token_info=token_info.astype(np.float64),
        strategy_prior=_matrix(table, "prior", path),
        strategy_posterior=_matrix(table, "posterior", path),
    )


def _matrix(table: pa.Table, name: str, path: str | Path) -> np.ndarray:
    """A list column whose rows all have K entries, as an (N, K) float64 array."""
    values, lengths = padded(table[name], np.nan)
    if lengths.size and lengths.min() != lengths.max():
        raise DataError(f"{path}: rows of column {name!r} differ in length")
    return values.astype(np.float64)
