"""The surprisal tables (docs/method.md#the-base-model-and-its-surprisal): tokens and examples.

Both record the sha256 of the base checkpoint that produced them in their file metadata
(`zgain.core.io.BASE_SHA_KEY`).
"""

from __future__ import annotations

import pyarrow as pa

TOKENS_SCHEMA = pa.schema(
    [
        ("example_id", pa.int64()),
        ("split", pa.string()),
        ("position", pa.int16()),  # 0..T-1 over the y tokens then EOS
        ("token", pa.int16()),  # the target token (EOS included)
        ("surprisal", pa.float32()),  # b_t = −log p_base(y_t | y_<t, x), nats
        ("oracle_surprisal", pa.float64()),  # b*_t, nats
    ]
)

EXAMPLES_SCHEMA = pa.schema(
    [
        ("example_id", pa.int64()),
        ("split", pa.string()),
        ("n_tokens", pa.int32()),  # T
        ("surprisal_sum", pa.float64()),  # B
        ("surprisal_mean", pa.float64()),  # b = B / T
        ("concentration", pa.float64()),  # Σ_t w_t², w_t = b_t / B
        ("oracle_nll", pa.float64()),
        ("oracle_nll_given_s", pa.float64()),
        ("oracle_info", pa.float64()),
        ("strategy", pa.int16()),
    ]
)
