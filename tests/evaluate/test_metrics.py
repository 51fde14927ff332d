"""Tests of the evaluation's pure functions: each asserts a value known in closed form or by hand.

The decomposition (`zgain.evaluate.decomposition`), the estimators
(`zgain.evaluate.estimators`) and active units (`zgain.cvae.diagnostics`); see
docs/method.md#evaluation-quantities. Strategy recovery beyond x is in test_recovery.py.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from zgain.cvae.diagnostics import active_units
from zgain.evaluate.decomposition import decomposition
from zgain.evaluate.estimators import (
    linear_probe_accuracy,
    localization_share,
    matched_accuracy,
    mutual_information_q,
    probe_split,
    spearman,
    strategy_recovery,
)
from zgain.evaluate.schema import DECOMPOSITION_KEYS

# --- decomposition -------------------------------------------------------------------------

# Three examples with T = 5, 10, 5 tokens. Oracle: C* = NLL* − I* = [6, 12, 20].
HAND_CASE = {
    "base": np.array([10.0, 20.0, 30.0]),  # B
    "post": np.array([8.0, 15.0, 27.0]),  # L
    "marginal": np.array([9.0, 18.0, 28.0]),  # M
    "kl": np.array([0.5, 1.0, 1.5]),
    "shuffled": np.array([9.0, 18.0, 29.0]),
    "prior": np.array([9.5, 19.0, 29.5]),
    "n_tokens": np.array([5.0, 10.0, 5.0]),
    "oracle_nll": np.array([7.0, 14.0, 26.0]),
    "oracle_info": np.array([1.0, 2.0, 6.0]),
}

HAND_EXPECTED = {
    "base_nll": 20.0,
    "posterior_nll": 50 / 3,
    "marginal_nll": 55 / 3,
    # B − L = [2, 5, 3] = (B − M = [1, 2, 2]) + (M − L = [1, 3, 1]).
    "gross_gain": 10 / 3,
    "marginal_gain": 5 / 3,
    "z_information": 5 / 3,
    # mean I^θ / mean I* = (5/3) / 3.
    "capture": 5 / 9,
    # B − L − KL = [1.5, 4, 1.5].
    "net_gain": 7 / 3,
    "kl": 1.0,
    # L_shuf − L = [1, 3, 2]; B − L_prior = [0.5, 1, 0.5].
    "z_reliance": 2.0,
    "prior_sample_gain": 2 / 3,
    "oracle_nll": 47 / 3,
    "oracle_info": 3.0,
    # B − NLL* = [3, 6, 4]; B − C* = [4, 8, 10].
    "oracle_marginal_gain": 13 / 3,
    "oracle_gross_gain": 22 / 3,
    # 1 − ΣL/ΣB = 1 − 50/60; ceiling 1 − ΣC*/ΣB = 1 − 38/60.
    "frac_gain_pop": 1 / 6,
    "frac_gain_pop_ceiling": 11 / 30,
    # mean(1 − [0.8, 0.75, 0.9]); ceiling mean(1 − [0.6, 0.6, 2/3]).
    "frac_gain_ex": 0.55 / 3,
    "frac_gain_ex_ceiling": 17 / 45,
    # Per token: B/T = [2, 2, 6] (Σ 10), L/T = [1.6, 1.5, 5.4] (Σ 8.5), C*/T = [1.2, 1.2, 4].
    "frac_gain_pop_tok": 0.15,
    "frac_gain_pop_tok_ceiling": 0.36,
    # ΣI^θ/ΣB = 5/60; ceiling ΣI*/ΣB = 9/60.
    "frac_z_information": 1 / 12,
    "frac_z_information_ceiling": 0.15,
    # I^θ = [1, 3, 1]: sample variance (4/9 + 16/9 + 4/9)/2 = 4/3, se = √(4/3)/√3 = 2/3.
    "z_information_se": 2 / 3,
}


def test_decomposition_hand_case_gives_every_key() -> None:
    out = decomposition(**HAND_CASE)
    assert tuple(out) == DECOMPOSITION_KEYS
    assert set(HAND_EXPECTED) == set(DECOMPOSITION_KEYS)
    for key in DECOMPOSITION_KEYS:
        assert isinstance(out[key], float), key
        assert out[key] == pytest.approx(HAND_EXPECTED[key], abs=1e-12), key


def test_fractional_gains_stay_below_their_oracle_ceilings_in_the_hand_case() -> None:
    out = decomposition(**HAND_CASE)
    for key in ("frac_gain_pop", "frac_gain_ex", "frac_gain_pop_tok", "frac_z_information"):
        assert out[key] < out[f"{key}_ceiling"], key


def test_capture_is_nan_without_oracle_information() -> None:
    out = decomposition(**{**HAND_CASE, "oracle_info": np.zeros(3)})
    assert math.isnan(out["capture"])
    assert out["oracle_info"] == 0.0
    # Everything else is still defined: C* = NLL* then.
    assert out["oracle_gross_gain"] == pytest.approx(out["oracle_marginal_gain"], abs=1e-12)
    assert out["frac_z_information_ceiling"] == 0.0


def test_ratio_of_means_differs_from_mean_of_ratios_when_base_varies() -> None:
    out = decomposition(**HAND_CASE)
    assert out["frac_gain_pop"] == pytest.approx(1 / 6)
    assert out["frac_gain_ex"] == pytest.approx(0.55 / 3)
    assert abs(out["frac_gain_pop"] - out["frac_gain_ex"]) > 0.01
    # With B constant the two coincide: 1 − ΣL/(nB) = mean(1 − L/B).
    constant = decomposition(**{**HAND_CASE, "base": np.full(3, 30.0)})
    assert constant["frac_gain_pop"] == pytest.approx(constant["frac_gain_ex"], abs=1e-12)
    assert constant["frac_gain_pop"] == pytest.approx(1 - 50 / 90, abs=1e-12)


@pytest.mark.parametrize("name", sorted(HAND_CASE))
@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_decomposition_refuses_non_finite_input(name: str, bad: float) -> None:
    values = HAND_CASE[name].copy()
    values[1] = bad
    with pytest.raises(ValueError, match=name):
        decomposition(**{**HAND_CASE, name: values})


@pytest.mark.parametrize("name", ["base", "n_tokens"])
@pytest.mark.parametrize("bad", [0.0, -1.0])
def test_decomposition_refuses_a_non_positive_base_or_length(name: str, bad: float) -> None:
    values = HAND_CASE[name].copy()
    values[2] = bad
    with pytest.raises(ValueError, match="must be > 0"):
        decomposition(**{**HAND_CASE, name: values})


def test_decomposition_needs_two_examples_and_equal_lengths() -> None:
    one = {name: values[:1] for name, values in HAND_CASE.items()}
    with pytest.raises(ValueError, match="at least 2 examples"):
        decomposition(**one)
    with pytest.raises(ValueError, match="kl"):
        decomposition(**{**HAND_CASE, "kl": np.ones(2)})


# --- posterior usage ---------------------------------------------------------------------


def test_active_units_counts_dims_above_threshold() -> None:
    rng = np.random.default_rng(0)
    n = 20_000
    # Std 1, 0.3, 0.05, 0 → variance 1, 0.09, 0.0025, 0 against the 0.01 threshold.
    mu = rng.standard_normal((n, 4)) * np.array([1.0, 0.3, 0.05, 0.0])
    count, variance = active_units(mu)
    assert count == 2
    np.testing.assert_allclose(variance, [1.0, 0.09, 0.0025, 0.0], rtol=0.05, atol=1e-12)
    assert active_units(mu, threshold=0.001)[0] == 3


def test_mi_of_well_separated_mixture_is_log_m() -> None:
    n_means, per_mean = 8, 50
    mu = np.repeat(np.arange(n_means, dtype=np.float64) * 100.0, per_mean)[:, None]
    logvar = np.full_like(mu, math.log(1e-2))  # σ = 0.1 ≪ spacing of 100
    estimate, cap = mutual_information_q(mu, logvar, n_samples=2, seed=0)
    assert estimate == pytest.approx(math.log(n_means), abs=1e-6)
    assert cap == pytest.approx(math.log(n_means * per_mean))


def test_mi_of_gaussian_channel_matches_closed_form() -> None:
    # μ_x ~ N(0, s²), z | x ~ N(μ_x, σ²): I = ½ log(1 + s²/σ²) per dim = ½ log 5 here.
    # Over seeds the estimate at N = 1500, S = 2 stays within ~0.03 nats; tolerance 0.06.
    rng = np.random.default_rng(1)
    n, dims, s, sigma = 1500, 2, 1.0, 0.5
    mu = rng.normal(0.0, s, (n, dims))
    logvar = np.full((n, dims), 2 * math.log(sigma))
    estimate, cap = mutual_information_q(mu, logvar, n_samples=2, seed=1)
    assert estimate == pytest.approx(dims * 0.5 * math.log(1 + s**2 / sigma**2), abs=0.06)
    assert estimate <= cap


def test_mi_of_posterior_independent_of_x_is_zero() -> None:
    n = 1000
    mu = np.full((n, 3), 0.7)
    logvar = np.full((n, 3), math.log(0.5))
    estimate, _ = mutual_information_q(mu, logvar, n_samples=2, seed=2)
    assert estimate == pytest.approx(0.0, abs=1e-9)


def test_mi_never_exceeds_cap_log_n_and_chunking_changes_nothing() -> None:
    rng = np.random.default_rng(3)
    mu = rng.normal(0.0, 50.0, (64, 2))  # so spread that every example is its own cluster
    logvar = np.full((64, 2), math.log(1e-4))
    full, cap = mutual_information_q(mu, logvar, n_samples=3, seed=4)
    chunked, _ = mutual_information_q(mu, logvar, n_samples=3, seed=4, max_bytes=1)
    assert cap == pytest.approx(math.log(64))
    assert full <= cap
    assert full == pytest.approx(cap, abs=1e-6)
    assert chunked == pytest.approx(full, abs=1e-12)


def test_mi_rejects_bad_shapes_and_sample_counts() -> None:
    with pytest.raises(ValueError, match="shape"):
        mutual_information_q(np.zeros((4, 2)), np.zeros((4, 3)), seed=0)
    with pytest.raises(ValueError, match="n_samples"):
        mutual_information_q(np.zeros((4, 2)), np.zeros((4, 2)), n_samples=0, seed=0)


# --- strategy recovery: KMeans, matched accuracy, linear probe -----------------------------


def test_matched_accuracy_and_nmi_of_permuted_labelling_are_one() -> None:
    labels = np.array([0, 0, 1, 1, 2, 2, 2])
    permuted = np.array([2, 0, 1])[labels]
    assert matched_accuracy(permuted, labels) == 1.0
    features = np.eye(3)[permuted] * 10.0
    out = strategy_recovery(features, labels, n_clusters=3, seed=0)
    assert out == {"nmi": pytest.approx(1.0), "matched_accuracy": 1.0}


def test_matched_accuracy_of_known_confusion() -> None:
    # Contingency (label rows × cluster columns) = [[3, 1], [0, 2], [1, 1]]: the best map is
    # label 0 → cluster 0, label 1 → cluster 1; label 2 is unmatched → (3 + 2) / 8.
    labels = np.array([0, 0, 0, 0, 1, 1, 2, 2])
    pred = np.array([0, 0, 0, 1, 1, 1, 0, 1])
    assert matched_accuracy(pred, labels) == pytest.approx(5 / 8)
    # More clusters than labels: the extra cluster's members count as errors.
    assert matched_accuracy(np.array([0, 1, 2, 2]), np.array([0, 0, 1, 1])) == pytest.approx(3 / 4)
    with pytest.raises(ValueError, match="shape"):
        matched_accuracy(np.array([0, 1]), np.array([0, 1, 1]))


def test_constant_prediction_and_collapsed_posterior_form_one_cluster() -> None:
    labels = np.repeat(np.arange(3), 10)
    features = np.full((30, 4), 0.25)  # collapsed: every example at the same point
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = strategy_recovery(features, labels, n_clusters=3, seed=0)
    assert out["nmi"] == pytest.approx(0.0)
    assert out["matched_accuracy"] == pytest.approx(1 / 3)  # one cluster covers one label


def test_strategy_recovery_on_separated_clusters() -> None:
    rng = np.random.default_rng(7)
    labels = rng.integers(0, 4, 400)
    centers = rng.normal(0.0, 10.0, (4, 3))
    features = centers[labels] + rng.normal(0.0, 0.1, (400, 3))
    out = strategy_recovery(features, labels, n_clusters=4, seed=7)
    assert out["nmi"] == pytest.approx(1.0)
    assert out["matched_accuracy"] == 1.0


def test_strategy_recovery_never_asks_for_more_clusters_than_distinct_points() -> None:
    # Two distinct points, four labels requested: two clusters, each one label pair.
    labels = np.repeat(np.arange(4), 5)
    features = np.repeat(np.array([[0.0], [1.0]]), 10, axis=0)
    out = strategy_recovery(features, labels, n_clusters=4, seed=0)
    assert out["matched_accuracy"] == pytest.approx(10 / 20)


def test_linear_probe_on_separable_features_and_on_noise() -> None:
    rng = np.random.default_rng(8)
    labels = np.repeat(np.arange(2), 300)
    separable = rng.normal(0.0, 1.0, (600, 5))
    separable[:, 0] += 8.0 * labels
    assert linear_probe_accuracy(separable, labels, seed=0) == pytest.approx(1.0)
    noise = rng.normal(0.0, 1.0, (600, 5))
    # Chance is 0.5; 180 held-out examples give a binomial std of ~0.037.
    assert linear_probe_accuracy(noise, labels, seed=0) == pytest.approx(0.5, abs=0.12)


def test_linear_probe_scores_on_the_held_out_rows_of_probe_split() -> None:
    # Features that carry the label on the training rows only: held-out accuracy is chance.
    rng = np.random.default_rng(9)
    labels = np.repeat(np.arange(2), 200)
    train, test = probe_split(labels, seed=3, test_fraction=0.3)
    features = rng.normal(0.0, 1.0, (400, 1))
    features[train, 0] += 8.0 * labels[train]
    features[test, 0] += 8.0 * (1 - labels[test])  # the opposite rule where it is scored
    assert linear_probe_accuracy(features, labels, seed=3, test_fraction=0.3) < 0.05


def test_probe_split_is_stratified_disjoint_covering_and_seeded() -> None:
    labels = np.repeat(np.array([0, 1, 2]), [100, 200, 700])
    rng = np.random.default_rng(10)
    labels = labels[rng.permutation(labels.size)]
    train, test = probe_split(labels, seed=5, test_fraction=0.3)
    assert np.intersect1d(train, test).size == 0
    np.testing.assert_array_equal(np.sort(np.concatenate([train, test])), np.arange(1000))
    assert np.all(np.diff(train) > 0) and np.all(np.diff(test) > 0)
    assert test.size == 300
    # Stratified: 30% of every class is held out.
    np.testing.assert_array_equal(np.bincount(labels[test], minlength=3), [30, 60, 210])
    again = probe_split(labels, seed=5, test_fraction=0.3)
    np.testing.assert_array_equal(again[0], train)
    np.testing.assert_array_equal(again[1], test)
    other = probe_split(labels, seed=6, test_fraction=0.3)
    assert not np.array_equal(other[1], test)
    with pytest.raises(ValueError, match="two label classes"):
        probe_split(np.zeros(10, dtype=int), seed=0, test_fraction=0.3)


# --- localization, correlation ------------------------------------------------------------


def test_localization_share_hand_example() -> None:
    gain = np.array([[1.0, 2.0, 3.0], [4.0, -1.0, 100.0]])
    revealed = np.array([[False, True, True], [True, False, True]])
    mask = np.array([[True, True, True], [True, True, False]])  # the 100 is padding
    # Masked gain: 1 + 2 + 3 + 4 − 1 = 9; revealed and masked: 2 + 3 + 4 = 9, share 1.
    assert localization_share(gain, revealed, mask) == pytest.approx(1.0)
    assert localization_share(gain, ~revealed, mask) == pytest.approx(0.0)
    half = np.array([[True, False, True], [False, False, False]])  # 1 + 3 = 4 of 9
    assert localization_share(gain, half, mask) == pytest.approx(4 / 9)
    # Negative gains: the share leaves [0, 1]: (−1) / 9.
    negative = np.array([[False, False, False], [False, True, False]])
    assert localization_share(gain, negative, mask) == pytest.approx(-1 / 9)
    assert math.isnan(localization_share(gain, revealed, np.zeros_like(mask)))
    with pytest.raises(ValueError, match="shapes"):
        localization_share(gain, revealed[:, :2], mask)


def test_spearman_known_values_and_constant_input() -> None:
    a = np.array([1.0, 2.0, 3.0, 4.0])
    assert spearman(a, a**3) == pytest.approx(1.0)
    assert spearman(a, -a) == pytest.approx(-1.0)
    # Ranks [1, 2, 3, 4] against [2, 1, 4, 3]: 1 − 6·4 / (4·15) = 0.6.
    assert spearman(a, np.array([2.0, 1.0, 4.0, 3.0])) == pytest.approx(0.6)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert math.isnan(spearman(a, np.ones(4)))
        assert math.isnan(spearman(a[:1], a[:1]))
