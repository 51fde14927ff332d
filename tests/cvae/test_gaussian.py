"""zgain.cvae.gaussian: the clamp, draws, log-density and KL of diagonal Gaussians."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from zgain.cvae.gaussian import (
    LOGVAR_MAX,
    LOGVAR_MIN,
    clamp_logvar,
    kl_divergence,
    log_density,
    reparameterize,
    sample,
)


def test_clamp_keeps_the_range_in_torch_and_numpy() -> None:
    values = [-200.0, -10.0, 0.5, 10.0, 200.0]
    expected = [LOGVAR_MIN, -10.0, 0.5, 10.0, LOGVAR_MAX]
    assert clamp_logvar(torch.tensor(values)).tolist() == expected
    assert clamp_logvar(np.array(values)).tolist() == expected


def test_reparameterize_is_seeded_and_clamps_the_log_variance() -> None:
    mu, logvar = torch.full((2, 3), 3.0), torch.full((2, 3), -200.0)
    z_a = reparameterize(mu, logvar, torch.Generator().manual_seed(5))
    assert torch.equal(z_a, reparameterize(mu, logvar, torch.Generator().manual_seed(5)))
    # logvar below the range is clamped: sigma = exp(LOGVAR_MIN / 2), not exp(-100).
    eps = torch.randn(mu.shape, generator=torch.Generator().manual_seed(5))
    assert torch.allclose(z_a, mu + math.exp(0.5 * LOGVAR_MIN) * eps)


def test_many_draws_have_the_given_moments_in_torch() -> None:
    mu, logvar = torch.tensor([[1.0, -2.0]]), torch.tensor([[math.log(0.25), math.log(4.0)]])
    z = sample(mu, logvar, 200_000, torch.Generator().manual_seed(3))
    assert z.shape == (1, 200_000, 2)
    assert torch.allclose(z[0].mean(dim=0), mu[0], atol=0.02)
    assert torch.allclose(z[0].std(dim=0), torch.tensor([0.5, 2.0]), rtol=0.01)


def test_numpy_draws_have_the_given_moments() -> None:
    mu = np.array([[1.0, -2.0]])
    logvar = np.array([[math.log(0.25), math.log(4.0)]])
    z = sample(mu, logvar, 200_000, np.random.default_rng(0))
    assert z.shape == (1, 200_000, 2) and z.dtype == np.float64
    np.testing.assert_allclose(z[0].mean(axis=0), [1.0, -2.0], atol=0.02)
    np.testing.assert_allclose(z[0].std(axis=0), [0.5, 2.0], rtol=0.01)
    with pytest.raises(TypeError, match="numpy.random.Generator"):
        sample(mu, logvar, 1, torch.Generator())


def test_log_density_matches_closed_form() -> None:
    # N(0.5; 0, 4) in 1-D: −½(log 2π + log 4 + 0.25/4).
    value = log_density(np.array([0.5]), np.array([0.0]), np.array([math.log(4.0)]))
    assert value == pytest.approx(-0.5 * (math.log(2 * math.pi) + math.log(4.0) + 0.0625))
    # Dimensions add: two independent standard normals at the origin.
    assert log_density(np.zeros(2), 0.0, 0.0) == pytest.approx(-math.log(2 * math.pi))
    # Broadcasting: (3, 1, D) against (1, 2, D) -> (3, 2).
    z, mu = np.zeros((3, 1, 2)), np.ones((1, 2, 2))
    assert log_density(z, mu, 0.0).shape == (3, 2)


def test_log_density_is_the_same_in_torch_and_numpy() -> None:
    rng = np.random.default_rng(1)
    z, mu, logvar = (rng.standard_normal((5, 3)) for _ in range(3))
    in_torch = log_density(*(torch.from_numpy(a) for a in (z, mu, logvar)))
    np.testing.assert_allclose(in_torch.numpy(), log_density(z, mu, logvar), rtol=1e-14)


def test_kl_of_identical_gaussians_is_zero() -> None:
    mu = torch.randn(4, 3, generator=torch.Generator().manual_seed(9))
    logvar = torch.randn(4, 3, generator=torch.Generator().manual_seed(10))
    assert (kl_divergence(mu, logvar, mu, logvar) == 0).all()


def test_kl_matches_closed_form_in_one_dimension() -> None:
    # q = N(1, 0.5²), p = N(0, 2²): log(σp/σq) + (σq² + Δμ²) / (2σp²) − ½.
    expected = math.log(2.0 / 0.5) + (0.25 + 1.0) / (2 * 4.0) - 0.5
    kl = kl_divergence(
        torch.tensor([[1.0]]),
        torch.tensor([[math.log(0.25)]]),
        torch.tensor([[0.0]]),
        torch.tensor([[math.log(4.0)]]),
    )
    assert kl.shape == (1, 1)
    assert kl.item() == pytest.approx(expected, rel=1e-6)


def test_kl_is_non_negative_on_random_inputs() -> None:
    gen = torch.Generator().manual_seed(11)
    mu_q, logvar_q, mu_p, logvar_p = (torch.randn(64, 8, generator=gen) * 3 for _ in range(4))
    assert (kl_divergence(mu_q, logvar_q, mu_p, logvar_p) >= 0).all()


def test_kl_equals_the_expected_log_density_ratio() -> None:
    """KL(q ‖ p) = E_q[log q(z) − log p(z)]: the closed form against a Monte Carlo mean."""
    mu_q, logvar_q = torch.tensor([[0.3, -1.0]]), torch.tensor([[-0.5, 0.4]])
    mu_p, logvar_p = torch.tensor([[0.0, 0.5]]), torch.tensor([[0.2, -0.3]])
    z = sample(mu_q.double(), logvar_q.double(), 400_000, torch.Generator().manual_seed(2))
    ratio = log_density(z, mu_q.double()[:, None], logvar_q.double()[:, None]) - log_density(
        z, mu_p.double()[:, None], logvar_p.double()[:, None]
    )
    closed = kl_divergence(mu_q, logvar_q, mu_p, logvar_p).sum().item()
    assert ratio.mean().item() == pytest.approx(closed, abs=0.01)
