"""Estimators of one run's evaluation (docs/method.md#evaluation-quantities).

Importance-weighted likelihood, I_q(x; z), strategy recovery (KMeans, linear probe),
localization and rank correlation. Every function takes numpy arrays (float64 unless stated),
is pure, and is deterministic given its ``seed``. Values are in nats.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import linear_sum_assignment
from scipy.special import logsumexp
from scipy.stats import spearmanr
from sklearn.cluster import KMeans
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import normalized_mutual_info_score
from sklearn.metrics.cluster import contingency_matrix
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from zgain.cvae.gaussian import log_density, sample

MI_MEMORY_BUDGET_BYTES: int = 16 * 2**20
"""Largest (chunk, N, D) float64 block the MI estimator materializes at once; speed and memory
only (each row is reduced alone). At 256 MiB the evaluate stage's peak RSS grew by 150 MiB
from n_test 500 to 2000 (bench/results.md, benchmark 5), the blocks and their temporaries."""

COLLAPSE_VARIANCE: float = 1e-12
"""Total feature variance below which a posterior counts as collapsed (one point)."""

KMEANS_N_INIT: int = 10
"""KMeans restarts; the best of these by inertia is kept."""

PROBE_MAX_ITER: int = 1000
"""L-BFGS iterations for the linear probe; standardized features converge well within this."""


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
    z = sample(mu, logvar, n_samples, rng)  # (N, S, D)
    log_q_own = log_density(z, mu[:, None, :], logvar[:, None, :])  # (N, S)
    queries = z.reshape(n * n_samples, d)
    chunk = max(1, max_bytes // (n * d * np.dtype(np.float64).itemsize))
    log_q_agg = np.empty(n * n_samples)
    for start in range(0, n * n_samples, chunk):
        block = queries[start : start + chunk, None, :]  # (c, 1, D)
        log_q_all = log_density(block, mu[None], logvar[None])  # (c, N)
        log_q_agg[start : start + chunk] = logsumexp(log_q_all, axis=1) - math.log(n)
    estimate = float(np.mean(log_q_own.reshape(-1) - log_q_agg))
    return estimate, math.log(n)


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
    if features.ndim != 2 or features.shape[0] != labels.shape[0]:
        raise ValueError(f"features (N, D) and labels (N,) disagree: {features.shape}")
    train, test = probe_split(labels, seed=seed, test_fraction=test_fraction)
    probe = make_pipeline(
        StandardScaler(), LogisticRegression(max_iter=PROBE_MAX_ITER, random_state=seed)
    )
    probe.fit(features[train], labels[train])
    return float(probe.score(features[test], labels[test]))


def probe_split(
    labels: np.ndarray, *, seed: int, test_fraction: float
) -> tuple[np.ndarray, np.ndarray]:
    """Indices (train, test) of the probes' held-out split, stratified by label."""
    labels = np.asarray(labels)
    if np.unique(labels).size < 2:
        raise ValueError("a linear probe needs at least two label classes")
    index = np.arange(labels.shape[0])
    train, test = train_test_split(
        index, test_size=test_fraction, stratify=labels, random_state=seed
    )
    return np.sort(train), np.sort(test)


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
