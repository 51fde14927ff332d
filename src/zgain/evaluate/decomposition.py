"""The decomposition of a run's gain over the base model, and its oracle anchors.

docs/method.md#evaluation-quantities; the identity's means are `zgain.core.gains`. Per example,
with B the base code length, L the code length with the posterior z, M the CVAE's own code
length for y given x (z marginalized), KL = KL(q ‖ p(z|x)):

    gross  B − L  =  (B − M)  +  (M − L)
                     marginal    z-information I^θ

and the oracle's counterparts: marginal* = B − NLL*, z-information* = I*, gross* = B − C* with
C* = NLL* − I*. Every value is a mean over examples in nats per sequence unless named `frac_`.
"""

from __future__ import annotations

import math

import numpy as np

from zgain.core.arrays import as_vector
from zgain.core.gains import gain_means
from zgain.evaluate.schema import DECOMPOSITION_KEYS

IDENTITY_TOL = 1e-9
"""|gross − (marginal + z-information)| above which the decomposition is a bug, nats."""


def oracle_vector(name: str, values: np.ndarray, n: int) -> np.ndarray:
    """An oracle column: finite, or NaN throughout for data without an oracle (then every
    oracle quantity below is NaN)."""
    arr = np.asarray(values, dtype=np.float64)
    if arr.shape == (n,) and np.isnan(arr).all():
        return arr
    return as_vector(name, arr, n)


def decomposition(
    *,
    base: np.ndarray,
    post: np.ndarray,
    marginal: np.ndarray,
    kl: np.ndarray,
    shuffled: np.ndarray,
    prior: np.ndarray,
    n_tokens: np.ndarray,
    oracle_nll: np.ndarray,
    oracle_info: np.ndarray,
) -> dict[str, float]:
    """Every per-run quantity of the decomposition; keys are ``DECOMPOSITION_KEYS``.

    All inputs are (N,) per example: base B_i, post L_i, marginal M_i, kl KL_i, shuffled
    L^shuf_i, prior L^prior_i, n_tokens T_i, oracle_nll NLL*_i, oracle_info I*_i (nats).

    capture = mean I^θ / mean I* (NaN when mean I* = 0, or with no oracle: NaN oracle columns
    make every oracle quantity NaN); z_reliance = mean(L^shuf − L), a
    diagnostic (unbounded, never a gain); prior_sample_gain = mean(B − L^prior).
    Fractional gains with their oracle ceilings (C* = NLL* − I*): frac_gain_pop = 1 − ΣL/ΣB
    (ceiling 1 − ΣC*/ΣB), frac_gain_ex = mean(1 − L_i/B_i) (ceiling mean(1 − C*_i/B_i)),
    frac_gain_pop_tok on token means (ceiling with C*_i/T_i), frac_z_information = ΣI^θ/ΣB
    (ceiling ΣI*/ΣB). z_information_se is the standard error of mean I^θ over examples.
    """
    b = as_vector("base", base)
    n = b.shape[0]
    if n < 2:
        raise ValueError(f"the decomposition needs at least 2 examples, got {n}")
    ell = as_vector("post", post, n)
    m = as_vector("marginal", marginal, n)
    kl_ = as_vector("kl", kl, n)
    shuf = as_vector("shuffled", shuffled, n)
    prior_ = as_vector("prior", prior, n)
    t = as_vector("n_tokens", n_tokens, n)
    nll_star = oracle_vector("oracle_nll", oracle_nll, n)
    info_star = oracle_vector("oracle_info", oracle_info, n)
    if np.any(b <= 0.0) or np.any(t <= 0.0):
        raise ValueError("base surprisal and n_tokens must be > 0 for every example")
    c_star = nll_star - info_star
    z_info = m - ell
    out = {
        "base_nll": b.mean(),
        "posterior_nll": ell.mean(),
        "marginal_nll": m.mean(),
        **gain_means(b, ell, m, kl_),
        "net_gain": (b - ell - kl_).mean(),
        "z_reliance": (shuf - ell).mean(),
        "prior_sample_gain": (b - prior_).mean(),
        "oracle_nll": nll_star.mean(),
        "oracle_info": info_star.mean(),
        "oracle_marginal_gain": (b - nll_star).mean(),
        "oracle_gross_gain": (b - c_star).mean(),
        "frac_gain_pop": 1.0 - ell.sum() / b.sum(),
        "frac_gain_pop_ceiling": 1.0 - c_star.sum() / b.sum(),
        "frac_gain_ex": np.mean(1.0 - ell / b),
        "frac_gain_ex_ceiling": np.mean(1.0 - c_star / b),
        "frac_gain_pop_tok": 1.0 - (ell / t).sum() / (b / t).sum(),
        "frac_gain_pop_tok_ceiling": 1.0 - (c_star / t).sum() / (b / t).sum(),
        "frac_z_information": z_info.sum() / b.sum(),
        "frac_z_information_ceiling": info_star.sum() / b.sum(),
        "z_information_se": z_info.std(ddof=1) / math.sqrt(n),
    }
    gap = out["gross_gain"] - (out["marginal_gain"] + out["z_information"])
    if abs(gap) > IDENTITY_TOL:
        raise ArithmeticError(f"gross ≠ marginal + z-information: off by {gap} nats")
    out["capture"] = out["z_information"] / out["oracle_info"] if out["oracle_info"] else math.nan
    return {key: float(out[key]) for key in DECOMPOSITION_KEYS}
