"""From per-example evaluation arrays to the evaluation table and the run's metrics.

docs/method.md#evaluation-quantities.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from zgain.core.io import list_array
from zgain.cvae.diagnostics import active_units
from zgain.evaluate.estimators import (
    linear_probe_accuracy,
    localization_share,
    mutual_information_q,
    spearman,
    strategy_recovery,
)
from zgain.evaluate.gains import gain_summary
from zgain.evaluate.schema import EVAL_SCHEMA
from zgain.evaluate.scoring import PerExample
from zgain.world.splits import Split


def revealed_positions(split: Split, mask: np.ndarray, min_nats: float) -> np.ndarray:
    """(N, T) bool: positions where the oracle's per-token information about s exceeds min_nats."""
    return mask & (split.oracle_token_info > min_nats)


def evaluation_table(
    variant: str,
    seed: int,
    split: Split,
    surprisal: np.ndarray,
    mask: np.ndarray,
    scores: PerExample,
    revealed: np.ndarray,
) -> pa.Table:
    """One row per test example in `EVAL_SCHEMA`."""
    n = len(split)
    b = np.where(mask, surprisal.astype(np.float64), 0.0)
    n_tokens = mask.sum(1)
    total = b.sum(1)
    token_gain = np.where(mask, b - scores.token_nll_post, 0.0)
    columns = {
        "example_id": pa.array(split.example_id),
        "variant": pa.array([variant] * n),
        "seed": pa.array(np.full(n, seed, dtype=np.int32)),
        "strategy": pa.array(split.strategy.astype(np.int16)),
        "n_tokens": pa.array(n_tokens.astype(np.int32)),
        "surprisal_sum": pa.array(total),
        "surprisal_mean": pa.array(total / n_tokens),
        "nll_post": pa.array(scores.nll_post),
        "nll_post_mean": pa.array(scores.nll_post / n_tokens),
        "nll_prior": pa.array(scores.nll_prior),
        "nll_shuffled": pa.array(scores.nll_shuffled),
        "nll_zero": pa.array(scores.nll_zero),
        "kl": pa.array(scores.kl),
        "log_lik_iw": pa.array(scores.log_lik_iw),
        "oracle_nll": pa.array(split.oracle_nll),
        "oracle_info": pa.array(split.oracle_info),
        "gain": pa.array(total - scores.nll_post),
        "token_gain": list_array(token_gain, n_tokens),
        "revealed": list_array(revealed, n_tokens),
    }
    return pa.table(columns).cast(EVAL_SCHEMA)


def run_metrics(
    split: Split,
    surprisal: np.ndarray,
    mask: np.ndarray,
    scores: PerExample,
    revealed: np.ndarray,
    *,
    n_strategies: int,
    probe_test_fraction: float,
    seed: int,
) -> dict[str, float]:
    """Every aggregate of one (variant, seed) run, flat for `dvc metrics`."""
    b = np.where(mask, surprisal.astype(np.float64), 0.0)
    total = b.sum(1)
    metrics = gain_summary(
        seq_base=total,
        seq_post=scores.nll_post,
        seq_shuffled=scores.nll_shuffled,
        seq_prior=scores.nll_prior,
        seq_zero=scores.nll_zero,
        kl=scores.kl,
        log_lik_iw=scores.log_lik_iw,
        n_tokens=mask.sum(1),
        oracle_info=split.oracle_info,
        oracle_nll=split.oracle_nll,
    )
    n_active, _ = active_units(scores.mu)
    mi, mi_cap = mutual_information_q(scores.mu, scores.logvar, seed=seed)
    recovery = strategy_recovery(scores.mu, split.strategy, n_clusters=n_strategies, seed=seed)
    token_gain = np.where(mask, b - scores.token_nll_post, 0.0)
    metrics |= {
        "active_units": float(n_active),
        "mi_q_nats": mi,
        "mi_q_cap_nats": mi_cap,
        "strategy_nmi": recovery["nmi"],
        "strategy_matched_accuracy": recovery["matched_accuracy"],
        "strategy_probe_accuracy": linear_probe_accuracy(
            scores.mu, split.strategy, seed=seed, test_fraction=probe_test_fraction
        ),
        "localization_share": localization_share(token_gain, revealed, mask),
        "revealed_token_share": float(revealed.sum() / mask.sum()),
        "spearman_surprisal_gain": spearman(total / mask.sum(1), total - scores.nll_post),
        "n_examples": float(len(split)),
    }
    metrics |= {f"kl_dim_{j}": float(v) for j, v in enumerate(scores.kl_per_dim.mean(0))}
    return metrics
