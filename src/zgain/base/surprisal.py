"""Scoring a frozen model into per-token and per-example surprisal tables.

docs/method.md#the-base-model-and-its-surprisal. The file metadata of both tables records the
sha256 of the base checkpoint that produced them (`zgain.core.io.BASE_SHA_KEY`).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import torch

from zgain.base.model import BaseLM
from zgain.base.schema import EXAMPLES_SCHEMA, TOKENS_SCHEMA
from zgain.core.nll import token_nll
from zgain.core.sequences import SeqBatch, chunks, select
from zgain.world.splits import Split


@torch.no_grad()
def score_tokens(
    model: BaseLM, batch: SeqBatch, *, max_x_len: int, batch_size: int, device: torch.device
) -> torch.Tensor:
    """Per-token surprisal −log p(y_t | y_<t, x) in nats, (N, T) float32 on CPU, 0 off the mask.

    Runs in eval mode without autocast: these values are the frozen reference every CVAE is
    measured against, so they are computed at full precision.
    """
    was_training = model.training
    model.eval()
    out = []
    for rows in chunks(batch.targets.shape[0], batch_size):
        part = select(batch, rows).to(device)
        logits = model(part.decoder_input, first=max_x_len)  # (b, T, V)
        out.append(token_nll(logits.float(), part.targets, part.mask).cpu())
    model.train(was_training)
    return torch.cat(out)


def example_stats(surprisal: np.ndarray, mask: np.ndarray) -> dict[str, np.ndarray]:
    """Per-example T, B = Σ_t b_t, b = B / T and concentration Σ_t (b_t / B)² from (N, T) arrays."""
    b = np.where(mask, surprisal.astype(np.float64), 0.0)
    n_tokens = mask.sum(axis=1)
    total = b.sum(axis=1)
    if np.any(total <= 0):
        raise ValueError(
            "an example has zero total surprisal: the token shares b_t / B are undefined"
        )
    shares = b / total[:, None]
    return {
        "n_tokens": n_tokens,
        "surprisal_sum": total,
        "surprisal_mean": total / n_tokens,
        "concentration": (shares**2).sum(axis=1),
    }


def surprisal_tables(
    split_name: str, split: Split, surprisal: np.ndarray, batch: SeqBatch
) -> tuple[pa.Table, pa.Table]:
    """The rows of `tokens.parquet` and `examples.parquet` for one split."""
    mask = batch.mask.numpy()
    n, t = mask.shape
    rows, positions = np.nonzero(mask)  # row-major: example by example, position ascending
    tokens = pa.table(
        {
            "example_id": pa.array(split.example_id[rows]),
            "split": pa.array(np.full(len(rows), split_name)),
            "position": pa.array(positions.astype(np.int16)),
            "token": pa.array(batch.targets.numpy()[rows, positions].astype(np.int16)),
            "surprisal": pa.array(surprisal[rows, positions].astype(np.float32)),
            "oracle_surprisal": pa.array(split.oracle_surprisal[rows, positions]),
        }
    ).cast(TOKENS_SCHEMA)
    stats = example_stats(surprisal, mask)
    examples = pa.table(
        {
            "example_id": pa.array(split.example_id),
            "split": pa.array(np.full(n, split_name)),
            "n_tokens": pa.array(stats["n_tokens"].astype(np.int32)),
            "surprisal_sum": pa.array(stats["surprisal_sum"]),
            "surprisal_mean": pa.array(stats["surprisal_mean"]),
            "concentration": pa.array(stats["concentration"]),
            "oracle_nll": pa.array(split.oracle_nll),
            "oracle_nll_given_s": pa.array(split.oracle_nll_given_s),
            "oracle_info": pa.array(split.oracle_info),
            "strategy": pa.array(split.strategy.astype(np.int16)),
        }
    ).cast(EXAMPLES_SCHEMA)
    return tokens, examples
