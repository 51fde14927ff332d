"""Tests for zgain.world.synthetic: the oracle against brute-force enumeration of a tiny world,
each transform on a hand example, and the sampler against its distribution by Monte Carlo."""

from __future__ import annotations

import math

import numpy as np
import pytest
from brute_force import (
    N_SE,
    TOL,
    Enumeration,
    Reference,
    brute_force,
    enumerate_world,
    make_world,
    max_abs_error,
    pad_rows,
)

from zgain.world.synthetic import World, oracle, sample

WORLDS = {
    "drop_first-uniform": make_world(("copy", "reverse", "shift", "drop_first"), "uniform", 0.2),
    "drop_first-x_dependent": make_world(
        ("copy", "reverse", "shift", "drop_first"), "x_dependent", 0.2
    ),
    "double-uniform": make_world(("rotate", "reverse", "drop_first", "double"), "uniform", 0.3),
    "double-x_dependent": make_world(
        ("rotate", "reverse", "drop_first", "double"), "x_dependent", 0.1
    ),
}


@pytest.fixture(scope="module", params=list(WORLDS), ids=list(WORLDS))
def enumeration(request) -> Enumeration:
    return enumerate_world(WORLDS[request.param])


@pytest.fixture(scope="module")
def reference(enumeration: Enumeration) -> Reference:
    return brute_force(enumeration)


def test_every_x_has_a_distribution_over_y(enumeration: Enumeration) -> None:
    p_y = enumeration.per_x(np.exp(-enumeration.out.nll))  # (n_x, n_y)
    np.testing.assert_allclose(p_y.sum(axis=1), 1.0, rtol=0, atol=TOL)


def test_likelihoods_match_the_product_formula(
    enumeration: Enumeration, reference: Reference
) -> None:
    """−log p(y|x,s) and −log p(y|x) agree with the oracle formulas on reference transforms."""
    out = enumeration.out
    assert max_abs_error(out.nll_given_s, reference.nll_given_s) < TOL
    assert max_abs_error(out.nll, reference.nll) < TOL
    assert np.isfinite(out.nll).any()


def test_posterior_is_normalized_where_y_is_possible(enumeration: Enumeration) -> None:
    out = enumeration.out
    possible = np.isfinite(out.nll)
    assert possible.sum() > 0
    np.testing.assert_allclose(out.posterior[possible].sum(axis=1), 1.0, rtol=0, atol=TOL)
    assert (out.posterior[possible] >= 0).all()


def test_token_surprisal_sums_to_nll(enumeration: Enumeration) -> None:
    out = enumeration.out
    possible = np.isfinite(out.nll)
    assert (out.token_surprisal[~out.mask] == 0).all()
    b_sum = np.where(out.mask, out.token_surprisal, 0.0).sum(axis=1)
    np.testing.assert_allclose(b_sum[possible], out.nll[possible], rtol=0, atol=TOL)


def test_token_surprisal_is_the_predictive_of_the_prefix(
    enumeration: Enumeration, reference: Reference
) -> None:
    """b*_t = −log P(y_t | x, y_<t), P summing p(y'|x) over every y' (EOS included)."""
    possible = np.isfinite(reference.nll)
    out = enumeration.out.token_surprisal[possible]
    assert max_abs_error(out, reference.token_surprisal[possible]) < TOL


def test_token_info_sums_to_info(enumeration: Enumeration) -> None:
    out = enumeration.out
    possible = np.isfinite(out.nll)
    assert (out.token_info[~out.mask] == 0).all()
    np.testing.assert_allclose(
        out.token_info.sum(axis=1)[possible], out.info[possible], rtol=0, atol=TOL
    )


def test_info_is_the_kl_from_prior_to_posterior(enumeration: Enumeration) -> None:
    out = enumeration.out
    possible = np.isfinite(out.nll)
    post, log_prior = out.posterior[possible], out.log_prior[possible]
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(post > 0, post * (np.log(post) - log_prior), 0.0)
        expected_mean = np.where(post > 0, post * out.nll_given_s[possible], 0.0).sum(axis=1)
    kl = terms.sum(axis=1)
    info = out.info[possible]
    np.testing.assert_allclose(info, kl, rtol=0, atol=TOL)
    np.testing.assert_allclose(out.nll_given_s_mean[possible], expected_mean, rtol=1e-12)
    np.testing.assert_allclose(info, out.nll[possible] - expected_mean, rtol=0, atol=TOL)
    assert info.min() >= -TOL


def test_expected_info_is_bounded_by_prior_entropy(enumeration: Enumeration) -> None:
    """Σ_y p(y|x) I*(x, y) = I(Y; S | x) ≤ H(S | x) ≤ log K, for every x."""
    out, k = enumeration.out, enumeration.world.n_strategies
    p_y = enumeration.per_x(np.exp(-out.nll))
    info = enumeration.per_x(np.where(np.isfinite(out.nll), out.info, 0.0))
    mutual_info = (p_y * info).sum(axis=1)
    prior = enumeration.per_x(np.exp(out.log_prior))[:, 0]  # (n_x, K)
    entropy = -(prior * np.log(prior)).sum(axis=1)
    np.testing.assert_allclose(enumeration.per_x(out.prior_entropy)[:, 0], entropy, rtol=1e-12)
    assert (mutual_info >= -TOL).all()
    assert (mutual_info <= entropy + TOL).all()
    assert (entropy <= math.log(k) + TOL).all()
    # the noisy world hides some of the strategy: the bound is not attained everywhere
    assert (mutual_info < entropy - 1e-3).any()


def test_mask_covers_the_y_tokens_and_eos(enumeration: Enumeration) -> None:
    y_len = np.tile([len(y) for y in enumeration.ys], len(enumeration.xs))
    t = np.arange(enumeration.out.mask.shape[1])
    np.testing.assert_array_equal(enumeration.out.mask, t[None, :] <= y_len[:, None])


def test_one_likelihood_by_hand() -> None:
    """p(y | x, s) for x = (2, 0, 1), s = reverse, y = (1, 1, 2): one noisy token of three."""
    world = make_world(("copy", "reverse", "drop_first", "double"), "uniform", 0.2)
    x, x_len = pad_rows([(2, 0, 1)], world.length_max, world.vocab.pad)
    y, y_len = pad_rows([(1, 1, 2)], world.max_y_len, world.vocab.pad)
    out = oracle(world, x, x_len, y, y_len)
    eps, v = 0.2, 3
    kept, replaced = (1 - eps) + eps / v, eps / v
    # reverse gives (1, 0, 2): positions 0 and 2 agree, position 1 was replaced
    assert out.nll_given_s[0, 1] == pytest.approx(-math.log(kept * replaced * kept), rel=1e-12)
    # copy gives (2, 0, 1): every position disagrees
    assert out.nll_given_s[0, 0] == pytest.approx(-3 * math.log(replaced), rel=1e-12)
    # drop_first (length 2) and double (length 6) cannot produce a y of length 3
    assert np.isinf(out.nll_given_s[0, 2]) and np.isinf(out.nll_given_s[0, 3])
    p_y = (kept * replaced * kept + replaced**3) / 4
    assert out.nll[0] == pytest.approx(-math.log(p_y), rel=1e-12)
    assert out.posterior[0, 1] == pytest.approx(kept * replaced * kept / 4 / p_y, rel=1e-12)
    assert out.posterior[0, 2] == 0.0 and out.posterior[0, 3] == 0.0


# --- the prior and the transforms ---------------------------------------------------------


def test_uniform_prior_is_log_one_over_k() -> None:
    world = make_world(("copy", "reverse", "shift"), "uniform", 0.1)
    x, x_len = pad_rows([(0, 1), (2, 2, 1)], world.length_max, world.vocab.pad)
    np.testing.assert_allclose(world.log_prior(x, x_len), np.full((2, 3), -math.log(3)))


def test_x_dependent_prior_is_a_softmax_of_the_first_token() -> None:
    temperature, v = 0.7, 5
    world = make_world(
        ("copy", "reverse", "shift"),
        "x_dependent",
        0.1,
        vocab_size=v,
        prior_temperature=temperature,
    )
    x, x_len = pad_rows([(0, 4), (1, 0, 0), (3,)], world.length_max, world.vocab.pad)
    log_prior = world.log_prior(x, x_len)
    for i, x0 in enumerate([0, 1, 3]):
        scores = [math.cos(2 * math.pi * s * x0 / v) / temperature for s in (1, 2, 3)]
        expected = np.array(scores) - math.log(sum(math.exp(c) for c in scores))
        np.testing.assert_allclose(log_prior[i], expected, rtol=1e-12)
    np.testing.assert_allclose(log_prior[0], -math.log(3))  # x_0 = 0 gives the uniform prior
    np.testing.assert_allclose(np.exp(log_prior).sum(axis=1), 1.0)


HAND_X = [(0, 1, 2, 3), (4, 2), (1,)]
HAND_TRANSFORMS = {
    "copy": [(0, 1, 2, 3), (4, 2), (1,)],
    "reverse": [(3, 2, 1, 0), (2, 4), (1,)],
    "shift": [(2, 3, 4, 0), (1, 4), (3,)],  # +2 mod 5
    "rotate": [(1, 2, 3, 0), (2, 4), (1,)],
    "drop_first": [(1, 2, 3), (2,), ()],
    "double": [(0, 1, 2, 3, 0, 1, 2, 3), (4, 2, 4, 2), (1, 1)],
}


@pytest.mark.parametrize("name", list(HAND_TRANSFORMS))
def test_transform_on_a_hand_example(name: str) -> None:
    world = World(5, 1, 4, tuple(HAND_TRANSFORMS), 2, "uniform", 0.5, 0.0)
    x, x_len = pad_rows(HAND_X, world.length_max, world.vocab.pad)
    y, y_len = world.apply(name, x, x_len)
    expected, expected_len = pad_rows(HAND_TRANSFORMS[name], world.max_y_len, world.vocab.pad)
    assert world.max_y_len == 8
    np.testing.assert_array_equal(y_len, expected_len)
    np.testing.assert_array_equal(y, expected)


# --- noise-free worlds ----------------------------------------------------------------------


@pytest.mark.parametrize("prior", ["uniform", "x_dependent"])
def test_noise_free_info_is_the_surprise_of_the_strategy(prior: str) -> None:
    """With distinguishable transforms, I* = −log p(s|x); its prior mean is H(S | x)."""
    world = make_world(("copy", "reverse", "shift", "drop_first"), prior, 0.0, vocab_size=4)
    x0 = (1, 0, 2)  # copy, reverse, shift, drop_first give four different y
    k = world.n_strategies
    x, x_len = pad_rows([x0] * k, world.length_max, world.vocab.pad)
    ys = [world.apply(name, x[:1], x_len[:1]) for name in world.transforms]
    y = np.concatenate([o[0] for o in ys])
    y_len = np.concatenate([o[1] for o in ys])
    out = oracle(world, x, x_len, y, y_len)
    for values in (out.nll, out.posterior, out.info, out.token_surprisal, out.token_info):
        assert not np.isnan(values).any()
    np.testing.assert_allclose(out.posterior, np.eye(k), atol=0)
    np.testing.assert_allclose(np.diag(out.nll_given_s), 0.0, atol=0)
    np.testing.assert_allclose(out.info, -np.diag(out.log_prior), rtol=1e-12)
    prior_probs = np.exp(out.log_prior[0])
    assert prior_probs @ out.info == pytest.approx(out.prior_entropy[0], rel=1e-12)
    if prior == "uniform":
        np.testing.assert_allclose(out.info, math.log(k), rtol=1e-12)


def test_noise_free_posterior_splits_between_transforms_that_agree() -> None:
    """x = (1, 1): copy and reverse both give (1, 1); the posterior is their renormalized prior."""
    world = make_world(("copy", "reverse", "shift", "drop_first"), "x_dependent", 0.0)
    x, x_len = pad_rows([(1, 1)], world.length_max, world.vocab.pad)
    y, y_len = pad_rows([(1, 1)], world.max_y_len, world.vocab.pad)
    out = oracle(world, x, x_len, y, y_len)
    prior = np.exp(out.log_prior[0])
    expected = np.array([prior[0], prior[1], 0.0, 0.0]) / (prior[0] + prior[1])
    np.testing.assert_allclose(out.posterior[0], expected, rtol=1e-12)
    assert out.nll[0] == pytest.approx(-math.log(prior[0] + prior[1]), rel=1e-12)
    assert out.token_surprisal[0, :3].sum() == pytest.approx(out.nll[0], rel=1e-12)
    assert not np.isnan(out.token_info).any()


# --- the sampler --------------------------------------------------------------------------

MC_WORLD = World(4, 2, 6, ("copy", "reverse", "shift", "drop_first"), 1, "x_dependent", 0.7, 0.2)
MC_N = 200_000


@pytest.fixture(scope="module")
def mc_sample():
    return sample(MC_WORLD, MC_N, np.random.default_rng(12345))


def test_sampled_strategies_follow_the_prior(mc_sample) -> None:
    prior = np.exp(mc_sample.oracle.log_prior)  # (N, K), given x
    counts = np.bincount(mc_sample.strategy, minlength=MC_WORLD.n_strategies)
    expected = prior.sum(axis=0)
    se = np.sqrt((prior * (1 - prior)).sum(axis=0))
    assert (np.abs(counts - expected) < N_SE * se).all(), (counts, expected, se)


def test_sampled_y_is_the_noisy_transform(mc_sample) -> None:
    x, x_len, s = mc_sample.x, mc_sample.x_len, mc_sample.strategy
    outputs = [MC_WORLD.apply(name, x, x_len) for name in MC_WORLD.transforms]
    rows = np.arange(MC_N)
    clean = np.stack([o[0] for o in outputs], axis=1)[rows, s]
    clean_len = np.stack([o[1] for o in outputs], axis=1)[rows, s]
    np.testing.assert_array_equal(mc_sample.y_len, clean_len)
    valid = np.arange(MC_WORLD.max_y_len)[None, :] < clean_len[:, None]
    assert (mc_sample.y[~valid] == MC_WORLD.vocab.pad).all()
    assert ((mc_sample.y[valid] >= 0) & (mc_sample.y[valid] < MC_WORLD.vocab_size)).all()
    mismatch = (mc_sample.y != clean)[valid]
    rate = MC_WORLD.noise * (1 - 1 / MC_WORLD.vocab_size)
    se = math.sqrt(rate * (1 - rate) / mismatch.size)
    assert abs(mismatch.mean() - rate) < N_SE * se, (mismatch.mean(), rate, se)


def test_sampled_x_is_uniform(mc_sample) -> None:
    lengths = np.arange(MC_WORLD.length_min, MC_WORLD.length_max + 1)
    counts = np.array([(mc_sample.x_len == n).sum() for n in lengths])
    p = 1 / len(lengths)
    assert counts.sum() == MC_N
    assert (np.abs(counts - MC_N * p) < N_SE * math.sqrt(MC_N * p * (1 - p))).all(), counts
    valid = np.arange(MC_WORLD.length_max)[None, :] < mc_sample.x_len[:, None]
    assert (mc_sample.x[~valid] == MC_WORLD.vocab.pad).all()
    tokens = np.bincount(mc_sample.x[valid], minlength=MC_WORLD.vocab_size)
    assert len(tokens) == MC_WORLD.vocab_size
    q = 1 / MC_WORLD.vocab_size
    se = math.sqrt(valid.sum() * q * (1 - q))
    assert (np.abs(tokens - valid.sum() * q) < N_SE * se).all(), tokens


def test_sample_carries_its_oracle(mc_sample) -> None:
    head = slice(0, 500)
    again = oracle(
        MC_WORLD,
        mc_sample.x[head],
        mc_sample.x_len[head],
        mc_sample.y[head],
        mc_sample.y_len[head],
    )
    np.testing.assert_array_equal(mc_sample.oracle.nll[head], again.nll)
    np.testing.assert_array_equal(mc_sample.oracle.posterior[head], again.posterior)
    # the posterior is calibrated: its mean matches the frequency of the hidden strategy
    freq = np.bincount(mc_sample.strategy, minlength=MC_WORLD.n_strategies) / MC_N
    post = mc_sample.oracle.posterior
    se = np.sqrt((post * (1 - post)).sum(axis=0)) / MC_N
    assert (np.abs(post.mean(axis=0) - freq) <= N_SE * se + TOL).all()


def test_sample_is_reproducible_from_its_seed() -> None:
    a = sample(MC_WORLD, 300, np.random.default_rng(7))
    b = sample(MC_WORLD, 300, np.random.default_rng(7))
    c = sample(MC_WORLD, 300, np.random.default_rng(8))
    for field in ("x", "x_len", "y", "y_len", "strategy"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field))
    assert not np.array_equal(a.y, c.y)
