"""Aggregate gains of a CVAE over the base model (docs/method.md#evaluation-quantities).

Notation: for example i, B_i is the base model's sequence surprisal, L_i the CVAE's, T_i the
number of scored tokens, b_i = B_i / T_i and ℓ̄_i = L_i / T_i; nats unless a name says bits.
"""

from __future__ import annotations

import math

import numpy as np

from zgain.core.arrays import as_vector

NATS_PER_BIT: float = math.log(2.0)
"""One bit is log 2 nats."""

_GAINS: tuple[str, ...] = ("gross", "z", "net", "iw", "prior", "zero")
_GAIN_UNITS: tuple[str, ...] = ("nats_seq", "nats_tok", "bits_seq", "bits_tok")

GAIN_SUMMARY_KEYS: tuple[str, ...] = (
    *(f"gain_{g}_{u}" for g in _GAINS for u in _GAIN_UNITS),
    "frac_gain_pop",
    "frac_gain_ex",
    "frac_gain_pop_tok",
    "frac_gain_ex_tok",
    "capture_ratio",
    "oracle_info_nats",
    "base_excess_nats",
    "kl_nats",
)
"""Keys of :func:`gain_summary`, in report order."""


def to_bits(nats: float | np.ndarray) -> float | np.ndarray:
    """Convert an information quantity from nats to bits (divide by log 2)."""
    return nats / NATS_PER_BIT


def gain_summary(
    *,
    seq_base: np.ndarray,
    seq_post: np.ndarray,
    seq_shuffled: np.ndarray,
    seq_prior: np.ndarray,
    seq_zero: np.ndarray,
    kl: np.ndarray,
    log_lik_iw: np.ndarray,
    n_tokens: np.ndarray,
    oracle_info: np.ndarray,
    oracle_nll: np.ndarray,
) -> dict[str, float]:
    """Aggregate gains of a CVAE over the base model; keys are ``GAIN_SUMMARY_KEYS``.

    All inputs are (N,) per-example values in nats except ``n_tokens`` (T_i, a count):
    ``seq_base`` B_i, ``seq_post`` / ``seq_shuffled`` / ``seq_prior`` / ``seq_zero`` L_i with z
    from the posterior, shuffled across examples, from the prior and z = 0; ``kl`` KL_i;
    ``log_lik_iw`` log p̂_K(y|x); ``oracle_info`` I*_i; ``oracle_nll`` −log p(y|x).

    Gains (``gain_<name>_<nats|bits>_<seq|tok>``): gross = B − L_post; z = L_shuffled − L_post
    (what z carries beyond the fine-tuned decoder); net = B − L_post − KL (bits-back);
    iw = B + log p̂_K; prior = B − L_prior; zero = B − L_zero. ``_seq`` is the mean over
    examples; ``_tok`` is the ratio of means Σ_i(·) / Σ_i T_i, i.e. the per-sequence gain
    divided by mean T, so long sequences weigh more.

    Fractional gains: ``frac_gain_pop`` = 1 − ΣL_post / ΣB (ratio of means), ``frac_gain_ex``
    = mean(1 − L_i / B_i) (mean of ratios), and the same on token means: ``frac_gain_pop_tok``
    = 1 − Σℓ̄ / Σb, ``frac_gain_ex_tok`` = mean(1 − ℓ̄_i / b_i), which equals ``frac_gain_ex``
    identically because T_i cancels in ℓ̄_i / b_i.

    ``capture_ratio`` = gain_z_nats_seq / mean(I*) (NaN when mean(I*) = 0: there is nothing to
    capture); ``oracle_info_nats`` = mean(I*); ``base_excess_nats`` = mean(B) − mean(oracle_nll);
    ``kl_nats`` = mean(KL).

    Raises ValueError on mismatched shapes, non-finite values, B_i ≤ 0 or T_i ≤ 0 (a sequence
    of discrete tokens always has positive surprisal and length).
    """
    base = as_vector("seq_base", seq_base)
    n = base.shape[0]
    if n == 0:
        raise ValueError("gain_summary needs at least one example")
    post = as_vector("seq_post", seq_post, n)
    shuffled = as_vector("seq_shuffled", seq_shuffled, n)
    prior = as_vector("seq_prior", seq_prior, n)
    zero = as_vector("seq_zero", seq_zero, n)
    kl_ = as_vector("kl", kl, n)
    iw = as_vector("log_lik_iw", log_lik_iw, n)
    tokens = as_vector("n_tokens", n_tokens, n)
    info = as_vector("oracle_info", oracle_info, n)
    nll = as_vector("oracle_nll", oracle_nll, n)
    if np.any(base <= 0.0):
        raise ValueError("seq_base must be > 0 for every example (B_i = 0 is a data error)")
    if np.any(tokens <= 0.0):
        raise ValueError("n_tokens must be > 0 for every example")

    per_example = {
        "gross": base - post,
        "z": shuffled - post,
        "net": base - post - kl_,
        "iw": base + iw,
        "prior": base - prior,
        "zero": base - zero,
    }
    out: dict[str, float] = {}
    total_tokens = float(tokens.sum())
    for name, gain in per_example.items():
        seq = float(gain.mean())
        tok = float(gain.sum()) / total_tokens
        out[f"gain_{name}_nats_seq"] = seq
        out[f"gain_{name}_nats_tok"] = tok
        out[f"gain_{name}_bits_seq"] = float(to_bits(seq))
        out[f"gain_{name}_bits_tok"] = float(to_bits(tok))

    base_tok, post_tok = base / tokens, post / tokens  # b_i, ℓ̄_i
    out["frac_gain_pop"] = 1.0 - float(post.sum() / base.sum())
    out["frac_gain_ex"] = float(np.mean(1.0 - post / base))
    out["frac_gain_pop_tok"] = 1.0 - float(post_tok.sum() / base_tok.sum())
    out["frac_gain_ex_tok"] = float(np.mean(1.0 - post_tok / base_tok))
    mean_info = float(info.mean())
    out["capture_ratio"] = out["gain_z_nats_seq"] / mean_info if mean_info != 0.0 else math.nan
    out["oracle_info_nats"] = mean_info
    out["base_excess_nats"] = float(base.mean() - nll.mean())
    out["kl_nats"] = float(kl_.mean())
    return {key: out[key] for key in GAIN_SUMMARY_KEYS}
