"""What the evaluate stage writes: the per-example table and the keys of its metrics.json.

The report reads these names; keeping them here lets it depend on this file alone.
"""

from __future__ import annotations

import pyarrow as pa

from zgain.core.runs import ENVIRONMENT_KEY as _ENVIRONMENT_KEY
from zgain.core.runs import KL_TARGET_KEY as _KL_TARGET_KEY

EVAL_SCHEMA = pa.schema(
    [
        ("example_id", pa.int64()),
        ("variant", pa.string()),
        ("seed", pa.int32()),
        ("strategy", pa.int16()),
        ("n_tokens", pa.int32()),  # T_i
        ("surprisal_sum", pa.float64()),  # B_i, frozen base
        ("nll_post", pa.float64()),  # L_i = E_q[−log p(y|x,z)]
        ("nll_marginal", pa.float64()),  # M_i = −log p̂_K(y|x), defensive mixture
        ("kl", pa.float64()),  # KL(q(z|x,y) ‖ p(z|x))
        ("nll_shuffled", pa.float64()),  # z from another example's posterior
        ("nll_prior", pa.float64()),  # z ~ p(z|x)
        ("oracle_nll", pa.float64()),  # NLL*_i = −log p(y|x)
        ("oracle_info", pa.float64()),  # I*_i
        ("token_z_information", pa.list_(pa.float64())),  # i^θ_t = m_t − ℓ_t, sums to M − L
        ("oracle_token_info", pa.list_(pa.float64())),  # the oracle's per-token information
    ]
)

# Keys shared with training live in core (zgain.core.runs); metrics.json carries both.
ENVIRONMENT_KEY = _ENVIRONMENT_KEY
KL_TARGET_KEY = _KL_TARGET_KEY

DECOMPOSITION_KEYS: tuple[str, ...] = (
    "base_nll",
    "posterior_nll",
    "marginal_nll",
    "gross_gain",
    "marginal_gain",
    "z_information",
    "capture",
    "net_gain",
    "kl",
    "z_reliance",
    "prior_sample_gain",
    "oracle_nll",
    "oracle_info",
    "oracle_marginal_gain",
    "oracle_gross_gain",
    "frac_gain_pop",
    "frac_gain_pop_ceiling",
    "frac_gain_ex",
    "frac_gain_ex_ceiling",
    "frac_gain_pop_tok",
    "frac_gain_pop_tok_ceiling",
    "frac_z_information",
    "frac_z_information_ceiling",
    "z_information_se",
)
"""Keys of zgain.evaluate.decomposition.decomposition, in report order."""

RECOVERY_KEYS: tuple[str, ...] = (
    "probe_accuracy",
    "probe_accuracy_mean",
    "probe_floor",
    "probe_ceiling",
    "normalized_recovery",
    "normalized_recovery_mean",
    "kmeans_accuracy",
    "kmeans_nmi",
    "kmeans_accuracy_mean",
    "kmeans_nmi_mean",
    "kmeans_accuracy_floor",
    "kmeans_accuracy_ceiling",
    "kmeans_nmi_ceiling",
)
"""Keys of zgain.evaluate.recovery.strategy_recovery_beyond_x."""

LOCALIZATION_KEYS: tuple[str, ...] = (
    "localization_share",
    "oracle_localization_share",
    "token_info_spearman",
    "revealed_token_share",
)
"""Keys of zgain.evaluate.run_metrics.localization: they need a per-token oracle."""

USAGE_KEYS: tuple[str, ...] = (
    *LOCALIZATION_KEYS,
    "active_units",
    "mi_q_nats",
    "mi_q_cap_nats",
    "iw_samples",
    "n_examples",
)
"""Run metrics of zgain.evaluate.run_metrics beyond the decomposition and recovery keys."""
