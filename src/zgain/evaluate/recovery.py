"""Strategy recovery beyond x, measured on what the decoder receives (z samples).

docs/method.md#evaluation-quantities. The linear probe reads one z ~ q(z|x,y) per example
together with the oracle's x-only strategy prior log p(s|x); its floor is the same probe on
log p(s|x) alone and its ceiling the Bayes accuracy mean_i max_s p(s|x_i,y_i) on the same
held-out examples. Normalized recovery = (accuracy − floor) / (ceiling − floor): the share of
the strategy information beyond x that z makes linearly readable. KMeans on z samples alone is
scored against one cluster (floor) and the Bayes labels argmax_s p(s|x,y) (ceiling). The same
measures on E_q[z] stand beside them.
"""

from __future__ import annotations

import math

import numpy as np
from sklearn.metrics import normalized_mutual_info_score

from zgain.evaluate.estimators import (
    linear_probe_accuracy,
    matched_accuracy,
    probe_split,
    strategy_recovery,
)

MIN_PROBABILITY = 1e-300
"""Floor of p(s|x) before its log: a zero prior probability stays finite as a probe feature."""


def normalized(value: float, floor: float, ceiling: float) -> float:
    """(value − floor) / (ceiling − floor); NaN when the ceiling does not exceed the floor."""
    span = ceiling - floor
    return (value - floor) / span if span > 0 else math.nan


def strategy_recovery_beyond_x(
    z_sample: np.ndarray,
    z_mean: np.ndarray,
    prior: np.ndarray,
    posterior: np.ndarray,
    labels: np.ndarray,
    *,
    seed: int,
    test_fraction: float,
) -> dict[str, float]:
    """Every recovery measure of one run; keys are ``RECOVERY_KEYS``.

    z_sample, z_mean (N, D): one posterior sample and E_q[z] per example; prior p(s|x) and
    posterior p(s|x,y) (N, K); labels (N,) the hidden strategy.
    """
    labels = np.asarray(labels)
    prior, posterior = np.asarray(prior, np.float64), np.asarray(posterior, np.float64)
    n, k = prior.shape
    if posterior.shape != (n, k) or labels.shape != (n,):
        raise ValueError(f"prior {prior.shape}, posterior {posterior.shape}, labels {labels.shape}")
    log_prior = np.log(np.maximum(prior, MIN_PROBABILITY))
    _, test = probe_split(labels, seed=seed, test_fraction=test_fraction)

    def probe(features: np.ndarray) -> float:
        return linear_probe_accuracy(features, labels, seed=seed, test_fraction=test_fraction)

    floor = probe(log_prior)
    ceiling = float(posterior[test].max(axis=1).mean())
    accuracy = probe(np.hstack([z_sample, log_prior]))
    accuracy_mean = probe(np.hstack([z_mean, log_prior]))
    on_samples = strategy_recovery(z_sample, labels, n_clusters=k, seed=seed)
    on_means = strategy_recovery(z_mean, labels, n_clusters=k, seed=seed)
    bayes = posterior.argmax(axis=1)
    return {
        "probe_accuracy": accuracy,
        "probe_accuracy_mean": accuracy_mean,
        "probe_floor": floor,
        "probe_ceiling": ceiling,
        "normalized_recovery": normalized(accuracy, floor, ceiling),
        "normalized_recovery_mean": normalized(accuracy_mean, floor, ceiling),
        "kmeans_accuracy": on_samples["matched_accuracy"],
        "kmeans_nmi": on_samples["nmi"],
        "kmeans_accuracy_mean": on_means["matched_accuracy"],
        "kmeans_nmi_mean": on_means["nmi"],
        "kmeans_accuracy_floor": float(np.bincount(labels).max() / n),
        "kmeans_accuracy_ceiling": matched_accuracy(bayes, labels),
        "kmeans_nmi_ceiling": float(normalized_mutual_info_score(labels, bayes)),
    }
