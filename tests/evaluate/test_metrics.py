"""Tests of the evaluation metrics: each asserts a value known in closed form or by hand.

Gains (`zgain.evaluate.gains`), estimators (`zgain.evaluate.estimators`), active units
(`zgain.cvae.diagnostics`) and seed statistics (`zgain.report.statistics`); see
docs/method.md#evaluation-quantities and docs/method.md#uncertainty-over-seeds.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from zgain.cvae.diagnostics import active_units
from zgain.evaluate.estimators import (
    gaussian_log_density,
    iw_log_likelihood,
    linear_probe_accuracy,
    localization_share,
    matched_accuracy,
    mutual_information_q,
    spearman,
    strategy_recovery,
)
from zgain.evaluate.gains import GAIN_SUMMARY_KEYS, NATS_PER_BIT, gain_summary, to_bits
from zgain.report.statistics import bootstrap_ci, paired_wilcoxon

# --- gains -------------------------------------------------------------------------------

# Three examples with T = 5, 10, 5 tokens (ΣT = 20).
HAND_CASE = {
    "seq_base": np.array([10.0, 20.0, 30.0]),
    "seq_post": np.array([8.0, 15.0, 27.0]),
    "seq_shuffled": np.array([9.0, 18.0, 29.0]),
    "seq_prior": np.array([9.5, 19.0, 29.5]),
    "seq_zero": np.array([10.0, 19.5, 30.0]),
    "kl": np.array([0.5, 1.0, 1.5]),
    "log_lik_iw": np.array([-8.5, -16.0, -28.0]),
    "n_tokens": np.array([5.0, 10.0, 5.0]),
    "oracle_info": np.array([1.0, 2.0, 6.0]),
    "oracle_nll": np.array([7.0, 14.0, 26.0]),
}


def test_gain_summary_hand_case() -> None:
    out = gain_summary(**HAND_CASE)
    assert tuple(out) == GAIN_SUMMARY_KEYS
    expected = {
        # B − L_post = [2, 5, 3]: mean 10/3, per token 10/20.
        "gain_gross_nats_seq": 10 / 3,
        "gain_gross_nats_tok": 0.5,
        # L_shuffled − L_post = [1, 3, 2]: mean 2, per token 6/20.
        "gain_z_nats_seq": 2.0,
        "gain_z_nats_tok": 0.3,
        # B − L_post − KL = [1.5, 4, 1.5]: mean 7/3, per token 7/20.
        "gain_net_nats_seq": 7 / 3,
        "gain_net_nats_tok": 0.35,
        # B + log p̂ = [1.5, 4, 2]: mean 2.5, per token 7.5/20.
        "gain_iw_nats_seq": 2.5,
        "gain_iw_nats_tok": 0.375,
        # B − L_prior = [0.5, 1, 0.5]; B − L_zero = [0, 0.5, 0].
        "gain_prior_nats_seq": 2 / 3,
        "gain_zero_nats_seq": 1 / 6,
        # 1 − 50/60; mean(1 − [0.8, 0.75, 0.9]) = 0.55/3.
        "frac_gain_pop": 1 / 6,
        "frac_gain_ex": 0.55 / 3,
        # b = [2, 2, 6], ℓ̄ = [1.6, 1.5, 5.4]: 1 − 8.5/10; ℓ̄/b = L/B, so F_ex is unchanged.
        "frac_gain_pop_tok": 0.15,
        "frac_gain_ex_tok": 0.55 / 3,
        # G_z / mean(I*) = 2 / 3.
        "capture_ratio": 2 / 3,
        "oracle_info_nats": 3.0,
        # mean(B) − mean(oracle_nll) = 20 − 47/3.
        "base_excess_nats": 13 / 3,
        "kl_nats": 1.0,
    }
    for key, value in expected.items():
        assert out[key] == pytest.approx(value, abs=1e-12), key


def test_gain_summary_bits_are_nats_over_log2() -> None:
    out = gain_summary(**HAND_CASE)
    assert math.exp(NATS_PER_BIT) == pytest.approx(2.0)
    assert to_bits(math.log(2.0)) == pytest.approx(1.0)
    for key in GAIN_SUMMARY_KEYS:
        if "_bits_" in key:
            nats = out[key.replace("_bits_", "_nats_")]
            assert out[key] == pytest.approx(nats / math.log(2.0), abs=1e-12), key
    # Gross gain per sequence: (10/3) / ln 2 ≈ 4.809 bits.
    assert out["gain_gross_bits_seq"] == pytest.approx(4.808983469629878, abs=1e-9)


def test_ratio_of_means_differs_from_mean_of_ratios_when_base_varies() -> None:
    out = gain_summary(**HAND_CASE)
    assert out["frac_gain_pop"] != pytest.approx(out["frac_gain_ex"], abs=1e-3)
    # With B constant the two coincide: 1 − ΣL/(nB) = mean(1 − L/B).
    constant = {**HAND_CASE, "seq_base": np.full(3, 30.0)}
    out_constant = gain_summary(**constant)
    assert out_constant["frac_gain_pop"] == pytest.approx(out_constant["frac_gain_ex"])


def test_gain_summary_rejects_zero_base_surprisal() -> None:
    bad = {**HAND_CASE, "seq_base": np.array([10.0, 0.0, 30.0])}
    with pytest.raises(ValueError, match="seq_base"):
        gain_summary(**bad)
    with pytest.raises(ValueError, match="kl"):
        gain_summary(**{**HAND_CASE, "kl": np.ones(2)})


def test_capture_ratio_is_nan_without_oracle_information() -> None:
    out = gain_summary(**{**HAND_CASE, "oracle_info": np.zeros(3)})
    assert math.isnan(out["capture_ratio"])


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


def test_gaussian_log_density_matches_closed_form() -> None:
    # N(0.5; 0, 4) in 1-D: −½(log 2π + log 4 + 0.25/4).
    value = gaussian_log_density(np.array([0.5]), np.array([0.0]), np.array([math.log(4.0)]))
    assert value == pytest.approx(-0.5 * (math.log(2 * math.pi) + math.log(4.0) + 0.0625))
    # Dimensions add: two independent standard normals at the origin.
    assert gaussian_log_density(np.zeros(2), 0.0, 0.0) == pytest.approx(-math.log(2 * math.pi))


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


def test_mi_never_exceeds_cap_and_chunking_changes_nothing() -> None:
    rng = np.random.default_rng(3)
    mu = rng.normal(0.0, 50.0, (64, 2))  # so spread that every example is its own cluster
    logvar = np.full((64, 2), math.log(1e-4))
    full, cap = mutual_information_q(mu, logvar, n_samples=3, seed=4)
    chunked, _ = mutual_information_q(mu, logvar, n_samples=3, seed=4, max_bytes=1)
    assert full <= cap
    assert full == pytest.approx(cap, abs=1e-6)
    assert chunked == pytest.approx(full, abs=1e-12)


# --- importance-weighted likelihood -------------------------------------------------------

SLOPE, NOISE_STD = 2.0, 0.5  # y | z ~ N(SLOPE z, NOISE_STD²), z ~ N(0, 1)


def _linear_gaussian_iw(
    y: np.ndarray, q_mean: np.ndarray, q_std: np.ndarray, k: int, rng: np.random.Generator
) -> np.ndarray:
    """IW estimate of log p(y) with K samples from N(q_mean, q_std²); y (N,) -> (N,)."""
    z = q_mean[:, None] + q_std[:, None] * rng.standard_normal((y.shape[0], k))  # (N, K)
    log_lik = gaussian_log_density(y[:, None, None], SLOPE * z[..., None], 2 * math.log(NOISE_STD))
    log_prior = gaussian_log_density(z[..., None], 0.0, 0.0)
    log_q = gaussian_log_density(
        z[..., None], q_mean[:, None, None], 2 * np.log(q_std)[:, None, None]
    )
    return iw_log_likelihood(log_lik, log_prior, log_q)


def _exact_log_marginal(y: np.ndarray) -> np.ndarray:
    """log N(y; 0, SLOPE² + NOISE_STD²), the exact log p(y)."""
    var = SLOPE**2 + NOISE_STD**2
    return -0.5 * (math.log(2 * math.pi * var) + y**2 / var)


def test_iw_is_exact_with_the_true_posterior() -> None:
    rng = np.random.default_rng(5)
    y = rng.normal(0.0, math.sqrt(SLOPE**2 + NOISE_STD**2), 200)
    # z | y ~ N(a y / (a² + s²), s² / (a² + s²)): every weight equals p(y).
    var = SLOPE**2 + NOISE_STD**2
    post_mean, post_std = SLOPE * y / var, np.full_like(y, NOISE_STD / math.sqrt(var))
    for k in (1, 7, 64):
        estimate = _linear_gaussian_iw(y, post_mean, post_std, k, rng)
        np.testing.assert_allclose(estimate, _exact_log_marginal(y), atol=1e-10)


def test_iw_with_a_wrong_posterior_is_below_exact_and_converges() -> None:
    rng = np.random.default_rng(6)
    y = rng.normal(0.0, math.sqrt(SLOPE**2 + NOISE_STD**2), 400)
    exact = _exact_log_marginal(y)
    var = SLOPE**2 + NOISE_STD**2
    # Shifted and 1.5× too wide: a proposal with heavier tails than the posterior.
    q_mean = SLOPE * y / var + 0.1
    q_std = np.full_like(y, 1.5 * NOISE_STD / math.sqrt(var))
    gap_small = np.mean(_linear_gaussian_iw(y, q_mean, q_std, 2, rng) - exact)
    gap_large = np.mean(_linear_gaussian_iw(y, q_mean, q_std, 2048, rng) - exact)
    assert gap_small < 0.0  # Jensen: E log mean w ≤ log E w = log p(y)
    assert abs(gap_large) < 0.01
    assert abs(gap_large) < abs(gap_small)


# --- strategy recovery -------------------------------------------------------------------


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


def test_constant_prediction_and_collapsed_posterior() -> None:
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


def test_linear_probe_on_separable_features_and_on_noise() -> None:
    rng = np.random.default_rng(8)
    labels = np.repeat(np.arange(2), 300)
    separable = rng.normal(0.0, 1.0, (600, 5))
    separable[:, 0] += 8.0 * labels
    assert linear_probe_accuracy(separable, labels, seed=0) == pytest.approx(1.0)
    noise = rng.normal(0.0, 1.0, (600, 5))
    # Chance is 0.5; 180 held-out examples give a binomial std of ~0.037.
    assert linear_probe_accuracy(noise, labels, seed=0) == pytest.approx(0.5, abs=0.12)


# --- localization, correlation, uncertainty ------------------------------------------------


def test_localization_share_hand_example() -> None:
    gain = np.array([[1.0, 2.0, 3.0], [4.0, -1.0, 100.0]])
    revealed = np.array([[False, True, True], [True, False, True]])
    mask = np.array([[True, True, True], [True, True, False]])  # the 100 is padding
    # Masked gain: 1 + 2 + 3 + 4 − 1 = 9; revealed and masked: 2 + 3 + 4 = 9, share 1.
    assert localization_share(gain, revealed, mask) == pytest.approx(1.0)
    assert localization_share(gain, ~revealed, mask) == pytest.approx(0.0)
    half = np.array([[True, False, True], [False, False, False]])  # 1 + 3 = 4 of 9
    assert localization_share(gain, half, mask) == pytest.approx(4 / 9)
    assert math.isnan(localization_share(gain, revealed, np.zeros_like(mask)))


def test_spearman_known_values_and_constant_input() -> None:
    a = np.array([1.0, 2.0, 3.0, 4.0])
    assert spearman(a, a**3) == pytest.approx(1.0)
    assert spearman(a, -a) == pytest.approx(-1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert math.isnan(spearman(a, np.ones(4)))


def test_bootstrap_ci_brackets_the_mean_and_is_degenerate_for_equal_values() -> None:
    values = np.array([1.0, 2.5, 0.5, 3.0, 2.0])
    mean, low, high = bootstrap_ci(values, seed=0)
    assert mean == pytest.approx(1.8)
    assert values.min() <= low < mean < high <= values.max()
    assert bootstrap_ci(values, seed=0) == (mean, low, high)  # deterministic given the seed
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert bootstrap_ci(np.full(4, 0.3), seed=0) == (0.3, 0.3, 0.3)
        assert bootstrap_ci(np.array([1.7]), seed=0) == (1.7, 1.7, 1.7)


def test_paired_wilcoxon_detects_a_shift_and_ignores_identical_samples() -> None:
    rng = np.random.default_rng(9)
    a = rng.normal(0.0, 1.0, 30)
    statistic, p_value = paired_wilcoxon(a + 0.5 + rng.normal(0.0, 0.1, 30), a)
    assert statistic == 0.0  # every difference is positive, so no negative ranks
    assert p_value < 0.05
    assert all(math.isnan(v) for v in paired_wilcoxon(a, a))
    one_differs = a.copy()
    one_differs[0] += 1.0
    assert all(math.isnan(v) for v in paired_wilcoxon(one_differs, a))
