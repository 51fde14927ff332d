"""From per-example evaluation arrays to the evaluation table and the run's metrics.

docs/method.md#evaluation-quantities.
"""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa

from zgain.core.io import list_array
from zgain.cvae.diagnostics import active_units
from zgain.evaluate.decomposition import decomposition
from zgain.evaluate.estimators import localization_share, mutual_information_q, spearman
from zgain.evaluate.recovery import strategy_recovery_beyond_x
from zgain.evaluate.schema import EVAL_SCHEMA, LOCALIZATION_KEYS, RECOVERY_KEYS
from zgain.evaluate.scoring import PerExample
from zgain.world.splits import Split


def revealed_positions(split: Split, mask: np.ndarray, min_nats: float) -> np.ndarray:
    """(N, T) bool: positions where the oracle's per-token information about s exceeds min_nats."""
    return mask & (split.oracle_token_info > min_nats)


def token_z_information(scores: PerExample, mask: np.ndarray) -> np.ndarray:
    """i^θ_t = m_t − ℓ_t (N, T), 0 off the mask; each row sums to M_i − L_i."""
    return np.where(mask, scores.token_nll_marginal - scores.token_nll_post, 0.0)


def evaluation_table(
    variant: str,
    seed: int,
    split: Split,
    base: np.ndarray,
    mask: np.ndarray,
    scores: PerExample,
) -> pa.Table:
    """One row per test example in `EVAL_SCHEMA`; base (N,) is B_i, mask (N, T) supervised."""
    n = len(split)
    n_tokens = mask.sum(1)
    columns = {
        "example_id": pa.array(split.example_id),
        "variant": pa.array([variant] * n),
        "seed": pa.array(np.full(n, seed, dtype=np.int32)),
        "strategy": pa.array(split.strategy.astype(np.int16)),
        "n_tokens": pa.array(n_tokens.astype(np.int32)),
        "surprisal_sum": pa.array(base),
        "nll_post": pa.array(scores.nll_post),
        "nll_marginal": pa.array(scores.nll_marginal),
        "kl": pa.array(scores.kl),
        "nll_shuffled": pa.array(scores.nll_shuffled),
        "nll_prior": pa.array(scores.nll_prior),
        "oracle_nll": pa.array(split.oracle_nll),
        "oracle_info": pa.array(split.oracle_info),
        "token_z_information": list_array(token_z_information(scores, mask), n_tokens),
        "oracle_token_info": list_array(np.where(mask, split.oracle_token_info, 0.0), n_tokens),
    }
    return pa.table(columns).cast(EVAL_SCHEMA)


def localization(
    split: Split, scores: PerExample, mask: np.ndarray, revealed: np.ndarray
) -> dict[str, float]:
    """Where z's information sits against the oracle's per-token information; NaN when the
    data has no per-token oracle (a pairs file)."""
    if np.isnan(split.oracle_token_info[mask]).all():
        return dict.fromkeys(LOCALIZATION_KEYS, math.nan)
    z_info_tokens = token_z_information(scores, mask)
    oracle_tokens = np.where(mask, split.oracle_token_info, 0.0)
    return {
        "localization_share": localization_share(z_info_tokens, revealed, mask),
        "oracle_localization_share": localization_share(oracle_tokens, revealed, mask),
        "token_info_spearman": spearman(z_info_tokens[mask], oracle_tokens[mask]),
        "revealed_token_share": float(revealed.sum() / mask.sum()),
    }


def run_metrics(
    split: Split,
    base: np.ndarray,
    mask: np.ndarray,
    scores: PerExample,
    revealed: np.ndarray,
    *,
    iw_samples: int,
    probe_test_fraction: float,
    seed: int,
) -> dict[str, float]:
    """Every aggregate of one (variant, seed) run, flat: decomposition, usage, recovery.

    base (N,) is the base's code length B_i of each example, mask (N, T) its supervised positions.
    """
    metrics = decomposition(
        base=base,
        post=scores.nll_post,
        marginal=scores.nll_marginal,
        kl=scores.kl,
        shuffled=scores.nll_shuffled,
        prior=scores.nll_prior,
        n_tokens=mask.sum(1),
        oracle_nll=split.oracle_nll,
        oracle_info=split.oracle_info,
    )
    n_active, _ = active_units(scores.mu)
    mi, mi_cap = mutual_information_q(scores.mu, scores.logvar, seed=seed)
    metrics |= localization(split, scores, mask, revealed)
    metrics |= {
        "active_units": float(n_active),
        "mi_q_nats": mi,
        "mi_q_cap_nats": mi_cap,
        "iw_samples": float(iw_samples),
        "n_examples": float(len(split)),
    }
    if split.strategy_prior.shape[1]:
        metrics |= strategy_recovery_beyond_x(
            scores.z_sample,
            scores.mu,
            split.strategy_prior,
            split.strategy_posterior,
            split.strategy,
            seed=seed,
            test_fraction=probe_test_fraction,
        )
    else:  # no hidden strategy (a pairs file): nothing to recover
        metrics |= dict.fromkeys(RECOVERY_KEYS, math.nan)
    metrics |= {f"kl_dim_{j}": float(v) for j, v in enumerate(scores.kl_per_dim.mean(0))}
    return metrics
