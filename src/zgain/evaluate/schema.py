"""What the evaluate stage writes: the per-example table and the run-environment key."""

from __future__ import annotations

import pyarrow as pa

EVAL_SCHEMA = pa.schema(
    [
        ("example_id", pa.int64()),
        ("variant", pa.string()),
        ("seed", pa.int32()),
        ("strategy", pa.int16()),
        ("n_tokens", pa.int32()),  # T_i
        ("surprisal_sum", pa.float64()),  # B_i, frozen base
        ("surprisal_mean", pa.float64()),  # b_i = B_i / T_i
        ("nll_post", pa.float64()),  # L_i, z ~ q(z|x,y), mean over S samples
        ("nll_post_mean", pa.float64()),  # ℓ̄_i = L_i / T_i
        ("nll_prior", pa.float64()),  # z ~ p(z|x)
        ("nll_shuffled", pa.float64()),  # z from another example's posterior
        ("nll_zero", pa.float64()),  # z = 0
        ("kl", pa.float64()),  # KL(q(z|x,y) ‖ p(z|x)), nats
        ("log_lik_iw", pa.float64()),  # log p̂_K(y|x)
        ("oracle_nll", pa.float64()),  # −log p(y|x)
        ("oracle_info", pa.float64()),  # I*
        ("gain", pa.float64()),  # B_i − L_i
        ("token_gain", pa.list_(pa.float64())),  # b_t − ℓ_t on the y tokens and EOS
        (
            "revealed",
            pa.list_(pa.bool_()),
        ),  # oracle per-token information > evaluate.reveal_min_nats
    ]
)

ENVIRONMENT_KEY = "environment"
"""Key of metrics.json holding what the run ran on (device, dtype, threads, torch version)."""
