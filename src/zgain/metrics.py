"""Evaluation metrics (SPEC §7): gains, posterior usage, strategy recovery, uncertainty.

Every function takes numpy arrays (float64 unless stated), is pure, and is deterministic
given its ``seed``. Surprisals and log-likelihoods are in nats unless a name says bits.
Notation follows SPEC §4: for example i, B_i is the base model's sequence surprisal,
L_i the CVAE's, T_i the number of scored tokens, b_i = B_i / T_i and ℓ̄_i = L_i / T_i.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import linear_sum_assignment
from scipy.special import logsumexp
from scipy.stats import bootstrap, spearmanr, wilcoxon
from sklearn.cluster import KMeans
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import normalized_mutual_info_score
from sklearn.metrics.cluster import contingency_matrix
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

NATS_PER_BIT: float = math.log(2.0)
"""One bit is log 2 nats."""

ACTIVE_UNIT_THRESHOLD: float = 0.01
"""Cov_x E_q[z_d | x] above which dimension d counts as active (Burda et al. 2016)."""

MI_MEMORY_BUDGET_BYTES: int = 256 * 2**20
"""Largest (chunk, N, D) float64 block the MI estimator materializes at once."""

COLLAPSE_VARIANCE: float = 1e-12
"""Total feature variance below which a posterior counts as collapsed (one point)."""

KMEANS_N_INIT: int = 10
"""KMeans restarts; the best of these by inertia is kept."""

PROBE_MAX_ITER: int = 1000
"""L-BFGS iterations for the linear probe; standardized features converge well within this."""

MIN_WILCOXON_NONZERO: int = 2
"""With fewer non-zero paired differences the signed-rank p-value is 1 by construction."""

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


def _as_vector(name: str, values: np.ndarray, n: int | None = None) -> np.ndarray:
    """Return ``values`` as a finite float64 (n,) vector or raise ValueError naming it."""
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim != 1 or (n is not None and arr.shape[0] != n):
        expected = "(N,)" if n is None else f"({n},)"
        raise ValueError(f"{name} must have shape {expected}, got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains non-finite values")
    return arr


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
    """Aggregate gains of a CVAE over the base model (SPEC §7); keys are ``GAIN_SUMMARY_KEYS``.

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
    base = _as_vector("seq_base", seq_base)
    n = base.shape[0]
    if n == 0:
        raise ValueError("gain_summary needs at least one example")
    post = _as_vector("seq_post", seq_post, n)
    shuffled = _as_vector("seq_shuffled", seq_shuffled, n)
    prior = _as_vector("seq_prior", seq_prior, n)
    zero = _as_vector("seq_zero", seq_zero, n)
    kl_ = _as_vector("kl", kl, n)
    iw = _as_vector("log_lik_iw", log_lik_iw, n)
    tokens = _as_vector("n_tokens", n_tokens, n)
    info = _as_vector("oracle_info", oracle_info, n)
    nll = _as_vector("oracle_nll", oracle_nll, n)
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


def active_units(
    mu: np.ndarray, threshold: float = ACTIVE_UNIT_THRESHOLD
) -> tuple[int, np.ndarray]:
    """Count posterior dimensions whose mean moves with x (Burda et al. 2016).

    mu (N, D): E_q[z | x_i] per example. Returns (count of dims with variance > threshold,
    per-dim variance (D,)), the variance across examples with ddof = 1 as in He et al.'s code.
    """
    mu = np.asarray(mu, dtype=np.float64)
    if mu.ndim != 2 or mu.shape[0] < 2:
        raise ValueError(f"mu must have shape (N, D) with N >= 2, got {mu.shape}")
    variance = mu.var(axis=0, ddof=1)  # (D,)
    return int(np.count_nonzero(variance > threshold)), variance


def gaussian_log_density(z: np.ndarray, mu: np.ndarray, logvar: np.ndarray) -> np.ndarray:
    """Log density of a diagonal Gaussian, summed over the last axis, in nats.

    z, mu, logvar broadcast to (..., D) -> (...).
    """
    z, mu, logvar = (np.asarray(a, dtype=np.float64) for a in (z, mu, logvar))
    return -0.5 * np.sum(math.log(2.0 * math.pi) + logvar + (z - mu) ** 2 * np.exp(-logvar), -1)


def mutual_information_q(
    mu: np.ndarray,
    logvar: np.ndarray,
    *,
    n_samples: int = 1,
    seed: int,
    max_bytes: int = MI_MEMORY_BUDGET_BYTES,
) -> tuple[float, float]:
    """Estimate I_q(x; z) in nats for a diagonal-Gaussian posterior (He et al. 2019).

    mu, logvar (N, D) parameterize q(z | x_i). The estimate is
    mean_i mean_s [log q(z_is | x_i) − log q̂(z_is)] with z_is ~ q(z | x_i) (n_samples per
    example) and the aggregate posterior q̂(z) = (1/N) Σ_j q(z | x_j) (log-mean-exp).
    Returns (estimate, cap) with cap = log N: since q̂(z) ≥ q(z | x_i) / N, every term is at
    most log N, so the estimate can never exceed it — an estimate near the cap says "at least
    log N", not its value. Both terms use the same sample (He et al. use the analytic entropy
    for the first; the two agree in expectation), which is what makes the cap hold exactly.
    Blocks of (chunk, N, D) stay under ``max_bytes``.
    """
    mu = np.asarray(mu, dtype=np.float64)
    logvar = np.asarray(logvar, dtype=np.float64)
    if mu.ndim != 2 or mu.shape != logvar.shape or mu.shape[0] == 0:
        raise ValueError(f"mu and logvar must share a shape (N, D), got {mu.shape}, {logvar.shape}")
    if n_samples < 1:
        raise ValueError(f"n_samples must be >= 1, got {n_samples}")
    n, d = mu.shape
    rng = np.random.default_rng(seed)
    std = np.exp(0.5 * logvar)
    z = mu[:, None, :] + std[:, None, :] * rng.standard_normal((n, n_samples, d))  # (N, S, D)
    log_q_own = gaussian_log_density(z, mu[:, None, :], logvar[:, None, :])  # (N, S)
    queries = z.reshape(n * n_samples, d)
    chunk = max(1, max_bytes // (n * d * np.dtype(np.float64).itemsize))
    log_q_agg = np.empty(n * n_samples)
    for start in range(0, n * n_samples, chunk):
        block = queries[start : start + chunk, None, :]  # (c, 1, D)
        log_q_all = gaussian_log_density(block, mu[None], logvar[None])  # (c, N)
        log_q_agg[start : start + chunk] = logsumexp(log_q_all, axis=1) - math.log(n)
    estimate = float(np.mean(log_q_own.reshape(-1) - log_q_agg))
    return estimate, math.log(n)


def iw_log_likelihood(
    log_p_y_given_z: np.ndarray, log_prior_z: np.ndarray, log_q_z: np.ndarray
) -> np.ndarray:
    """Importance-weighted log p̂_K(y | x) in nats, a lower bound on average (Burda et al.).

    Each input (N, K) is evaluated at K samples z_k ~ q(z | x, y): log p(y | x, z_k),
    log p(z_k | x), log q(z_k | x, y). Returns (N,) = logsumexp_k(log p + log prior − log q)
    − log K.
    """
    arrays = [np.asarray(a, dtype=np.float64) for a in (log_p_y_given_z, log_prior_z, log_q_z)]
    if arrays[0].ndim != 2 or any(a.shape != arrays[0].shape for a in arrays):
        raise ValueError(f"inputs must share a shape (N, K), got {[a.shape for a in arrays]}")
    log_weights = arrays[0] + arrays[1] - arrays[2]  # (N, K)
    return logsumexp(log_weights, axis=1) - math.log(log_weights.shape[1])


def matched_accuracy(pred: np.ndarray, labels: np.ndarray) -> float:
    """Accuracy of cluster ids ``pred`` (N,) against ``labels`` (N,) under the best one-to-one map.

    The map maximizes agreement on the contingency table (Hungarian algorithm); with more
    clusters than labels, the unmatched clusters count as errors, and vice versa.
    """
    pred, labels = np.asarray(pred), np.asarray(labels)
    if pred.shape != labels.shape or pred.ndim != 1 or pred.size == 0:
        raise ValueError(f"pred and labels must share a non-empty (N,) shape, got {pred.shape}")
    table = contingency_matrix(labels, pred)  # (n_labels, n_clusters)
    rows, cols = linear_sum_assignment(table, maximize=True)
    return float(table[rows, cols].sum() / pred.size)


def strategy_recovery(
    features: np.ndarray, labels: np.ndarray, *, n_clusters: int, seed: int
) -> dict[str, float]:
    """How well KMeans clusters of ``features`` (N, D), e.g. E_q[z|x], recover ``labels`` (N,).

    Returns ``nmi`` (normalized mutual information, 0..1) and ``matched_accuracy``. A collapsed
    posterior (total variance < COLLAPSE_VARIANCE) is scored as a single cluster; the number
    of clusters never exceeds the number of distinct feature rows.
    """
    features = np.asarray(features, dtype=np.float64)
    labels = np.asarray(labels)
    if features.ndim != 2 or features.shape[0] != labels.shape[0]:
        raise ValueError(f"features (N, D) and labels (N,) disagree: {features.shape}")
    if features.var(axis=0).sum() < COLLAPSE_VARIANCE:
        pred = np.zeros(features.shape[0], dtype=np.int64)
    else:
        k = min(n_clusters, np.unique(features, axis=0).shape[0])
        kmeans = KMeans(n_clusters=k, n_init=KMEANS_N_INIT, random_state=seed)
        pred = kmeans.fit_predict(features)
    return {
        "nmi": float(normalized_mutual_info_score(labels, pred)),
        "matched_accuracy": matched_accuracy(pred, labels),
    }


def linear_probe_accuracy(
    features: np.ndarray, labels: np.ndarray, *, seed: int, test_fraction: float = 0.3
) -> float:
    """Held-out accuracy of a logistic-regression probe from ``features`` (N, D) to ``labels``.

    The split is stratified by label; features are standardized on the training part only.
    """
    features = np.asarray(features, dtype=np.float64)
    labels = np.asarray(labels)
    if np.unique(labels).size < 2:
        raise ValueError("a linear probe needs at least two label classes")
    x_train, x_test, y_train, y_test = train_test_split(
        features, labels, test_size=test_fraction, stratify=labels, random_state=seed
    )
    probe = make_pipeline(
        StandardScaler(), LogisticRegression(max_iter=PROBE_MAX_ITER, random_state=seed)
    )
    probe.fit(x_train, y_train)
    return float(probe.score(x_test, y_test))


def localization_share(token_gain: np.ndarray, revealed: np.ndarray, mask: np.ndarray) -> float:
    """Share of the total token gain that falls on revealed positions.

    token_gain (N, T) = b_t − ℓ_t in nats; revealed, mask (N, T) bool. Returns
    Σ_{revealed & mask} gain / Σ_{mask} gain. Gains can be negative, so the share is not
    confined to [0, 1]. NaN when the denominator is 0 (no net gain to localize).
    """
    gain = np.asarray(token_gain, dtype=np.float64)
    revealed, mask = np.asarray(revealed, dtype=bool), np.asarray(mask, dtype=bool)
    if not gain.shape == revealed.shape == mask.shape:
        raise ValueError(f"shapes differ: {gain.shape}, {revealed.shape}, {mask.shape}")
    total = float(gain[mask].sum())
    if total == 0.0:
        return math.nan
    return float(gain[mask & revealed].sum()) / total


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman rank correlation of (n,) vectors; NaN when either is constant or n < 2."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"a and b must share an (n,) shape, got {a.shape}, {b.shape}")
    if a.size < 2 or np.ptp(a) == 0.0 or np.ptp(b) == 0.0:
        return math.nan
    return float(spearmanr(a, b).statistic)


def bootstrap_ci(
    values: np.ndarray, *, confidence: float = 0.95, seed: int, n_resamples: int = 2000
) -> tuple[float, float, float]:
    """Mean of ``values`` (n,) and its percentile-bootstrap confidence interval (mean, low, high).

    Percentile rather than BCa: the typical sample here is a handful of seeds, where BCa's
    jackknife acceleration is unstable or undefined. A degenerate sample (n = 1 or all
    values equal) has no spread and returns (v, v, v).
    """
    values = _as_vector("values", values)
    if values.size == 0:
        raise ValueError("bootstrap_ci needs at least one value")
    mean = float(values.mean())
    if values.size == 1 or np.ptp(values) == 0.0:
        return mean, mean, mean
    result = bootstrap(
        (values,),
        np.mean,
        n_resamples=n_resamples,
        confidence_level=confidence,
        method="percentile",
        rng=np.random.default_rng(seed),
    )
    return mean, float(result.confidence_interval.low), float(result.confidence_interval.high)


def paired_wilcoxon(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """Two-sided Wilcoxon signed-rank test of paired samples a, b (n,): (statistic, p-value).

    Zero differences are dropped (``zero_method="wilcox"``). Returns (nan, nan) when fewer
    than MIN_WILCOXON_NONZERO differences are non-zero — identical samples, or n too small
    for the test to say anything.
    """
    a, b = _as_vector("a", a), _as_vector("b", b)
    if a.shape != b.shape:
        raise ValueError(f"a and b must share a shape, got {a.shape}, {b.shape}")
    if np.count_nonzero(a - b) < MIN_WILCOXON_NONZERO:
        return math.nan, math.nan
    result = wilcoxon(a, b)
    return float(result.statistic), float(result.pvalue)
