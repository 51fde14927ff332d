"""Strategy recovery beyond x (`zgain.evaluate.recovery`): floors, ceilings, normalization.

docs/method.md#evaluation-quantities. The probe's ceiling is the Bayes accuracy
mean max_s p(s|x,y) on the probe's held-out rows; its floor the probe on log p(s|x) alone.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from zgain.evaluate.estimators import probe_split
from zgain.evaluate.recovery import normalized, strategy_recovery_beyond_x
from zgain.evaluate.schema import RECOVERY_KEYS

TEST_FRACTION = 0.3


def _entropy(counts: np.ndarray) -> float:
    p = counts[counts > 0] / counts.sum()
    return float(-(p * np.log(p)).sum())


def _nmi_of_table(table: np.ndarray) -> float:
    """NMI with arithmetic-mean normalization, from a (labels × clusters) contingency table."""
    joint = _entropy(table.ravel())
    h_rows, h_cols = _entropy(table.sum(1)), _entropy(table.sum(0))
    return (h_rows + h_cols - joint) / ((h_rows + h_cols) / 2)


def test_normalized_is_the_share_of_the_span_and_nan_without_one() -> None:
    assert normalized(0.7, 0.5, 0.9) == pytest.approx(0.5)
    assert normalized(0.5, 0.5, 0.9) == 0.0
    assert normalized(0.95, 0.5, 0.9) == pytest.approx(1.125)  # not clipped
    assert math.isnan(normalized(0.7, 0.6, 0.6))
    assert math.isnan(normalized(0.7, 0.6, 0.5))


def test_hand_built_posterior_gives_every_recovery_value() -> None:
    """20 examples, 2 strategies, an uninformative prior p(s|x) = (½, ½).

    p(s|x,y) puts max_i = 0.55 + 0.02 i on its argmax; the argmax is the true label except on
    rows 0 and 19. z samples carry the label; z means are collapsed to one point.
    """
    n = 20
    labels = np.array([0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 1, 0, 0, 1, 0, 1, 0, 1])
    assert np.bincount(labels).tolist() == [12, 8]
    bayes = labels.copy()
    bayes[[0, 19]] = 1 - bayes[[0, 19]]  # the Bayes label is wrong on two rows
    top = 0.55 + 0.02 * np.arange(n)
    posterior = np.where(bayes[:, None] == np.arange(2), top[:, None], 1 - top[:, None])
    prior = np.full((n, 2), 0.5)
    z_sample = 10.0 * np.eye(2)[labels]
    z_mean = np.zeros((n, 2))

    out = strategy_recovery_beyond_x(
        z_sample, z_mean, prior, posterior, labels, seed=4, test_fraction=TEST_FRACTION
    )
    assert tuple(out) == RECOVERY_KEYS

    _, test = probe_split(labels, seed=4, test_fraction=TEST_FRACTION)
    ceiling = top[test].mean()  # mean max posterior over the held-out rows only
    assert ceiling != pytest.approx(top.mean())  # so the choice of rows is tested
    # A constant prior feature: the floor probe predicts the majority class, strategy 0.
    floor = float(np.mean(labels[test] == 0))
    # Contingency of the Bayes labels: [[11, 1], [1, 7]] -> 18 of 20 under the identity map.
    expected = {
        "probe_accuracy": 1.0,
        "probe_accuracy_mean": floor,
        "probe_floor": floor,
        "probe_ceiling": ceiling,
        "normalized_recovery": (1.0 - floor) / (ceiling - floor),
        "normalized_recovery_mean": 0.0,
        "kmeans_accuracy": 1.0,
        "kmeans_nmi": 1.0,
        "kmeans_accuracy_mean": 12 / 20,  # collapsed: one cluster, the majority label
        "kmeans_nmi_mean": 0.0,
        "kmeans_accuracy_floor": 12 / 20,
        "kmeans_accuracy_ceiling": 18 / 20,
        "kmeans_nmi_ceiling": _nmi_of_table(np.array([[11, 1], [1, 7]])),
    }
    for key in RECOVERY_KEYS:
        assert out[key] == pytest.approx(expected[key], abs=1e-12), key


def _bayesian_world(n: int, k: int, seed: int):
    """s ~ p(s|x) (random per-row softmax); y reveals o = s w.p. 0.8, else o uniform over k.

    Returns the prior p(s|x), the exact posterior p(s|x,o), the labels s and o: since s is
    drawn from its prior and o from its likelihood, s is distributed as the posterior says.
    """
    rng = np.random.default_rng(seed)
    logits = rng.normal(0.0, 0.5, (n, k))
    prior = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    labels = np.array([rng.choice(k, p=row) for row in prior])
    reveal = rng.random(n) < 0.8
    observed = np.where(reveal, labels, rng.integers(0, k, n))
    likelihood = 0.8 * (observed[:, None] == np.arange(k)) + 0.2 / k
    posterior = prior * likelihood
    posterior /= posterior.sum(1, keepdims=True)
    return prior, posterior, labels, observed


@pytest.mark.parametrize("seed", [0, 1])
def test_features_with_the_strategy_information_beyond_x_recover_near_one(seed: int) -> None:
    # log p(s|x,y) = log p(s|x) + c·onehot(o) + const: linear in the probe's inputs, so
    # the probe reaches the Bayes accuracy, the ceiling.
    n, k = 3000, 3
    prior, posterior, labels, observed = _bayesian_world(n, k, seed)
    rng = np.random.default_rng(seed + 100)
    z_sample = np.eye(k)[observed] + rng.normal(0.0, 0.01, (n, k))
    z_noise = rng.normal(0.0, 1.0, (n, 2))
    out = strategy_recovery_beyond_x(
        z_sample, z_noise, prior, posterior, labels, seed=seed, test_fraction=TEST_FRACTION
    )
    assert out["probe_floor"] < out["probe_ceiling"] - 0.1  # y says much beyond x
    assert out["normalized_recovery"] == pytest.approx(1.0, abs=0.1)
    # Pure noise in place of z (the means here): nothing beyond the floor.
    assert abs(out["normalized_recovery_mean"]) < 0.15
    assert out["kmeans_accuracy_floor"] == pytest.approx(np.bincount(labels).max() / n)


def test_pure_noise_z_recovers_nothing_beyond_x() -> None:
    n, k = 3000, 3
    prior, posterior, labels, _ = _bayesian_world(n, k, seed=2)
    rng = np.random.default_rng(7)
    noise = rng.normal(0.0, 1.0, (n, 2))
    out = strategy_recovery_beyond_x(
        noise, noise, prior, posterior, labels, seed=2, test_fraction=TEST_FRACTION
    )
    assert abs(out["normalized_recovery"]) < 0.15
    assert out["kmeans_nmi"] < 0.02
    # The KMeans ceiling reads the Bayes labels; noise clusters stay far below it.
    assert out["kmeans_nmi_ceiling"] > 0.2
    assert out["kmeans_accuracy"] < out["kmeans_accuracy_ceiling"]


def test_collapsed_posterior_with_wobbling_means_is_seen_only_on_the_means() -> None:
    """E_q[z] moves by 0.01 with the strategy, but z ~ q has unit spread: the decoder sees noise."""
    n, k = 2000, 4
    rng = np.random.default_rng(11)
    labels = rng.integers(0, k, n)
    z_mean = 0.01 * labels[:, None] + rng.normal(0.0, 1e-4, (n, 2))
    z_sample = z_mean + rng.normal(0.0, 1.0, (n, 2))
    prior = np.full((n, k), 1 / k)
    posterior = np.eye(k)[labels]  # y reveals the strategy
    out = strategy_recovery_beyond_x(
        z_sample, z_mean, prior, posterior, labels, seed=0, test_fraction=TEST_FRACTION
    )
    assert out["kmeans_nmi"] < 0.02
    assert out["kmeans_nmi_mean"] > 0.5
    assert out["kmeans_accuracy_ceiling"] == 1.0 and out["kmeans_nmi_ceiling"] == 1.0
    assert out["probe_ceiling"] == 1.0
    assert abs(out["normalized_recovery"]) < 0.15
    assert out["normalized_recovery_mean"] > 0.5


def test_recovery_rejects_mismatched_shapes() -> None:
    prior = np.full((10, 2), 0.5)
    labels = np.repeat(np.arange(2), 5)
    z = np.zeros((10, 1))
    with pytest.raises(ValueError, match="posterior"):
        strategy_recovery_beyond_x(
            z, z, prior, prior[:, :1], labels, seed=0, test_fraction=TEST_FRACTION
        )
    with pytest.raises(ValueError, match="labels"):
        strategy_recovery_beyond_x(
            z, z, prior, prior, labels[:9], seed=0, test_fraction=TEST_FRACTION
        )
