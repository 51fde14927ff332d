"""Known answers for the CVAE's own code length M and the decomposition B − L = (B − M) + (M − L).

docs/method.md#evaluation-quantities.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from conftest import make_small_base, random_batch

from zgain.cvae import marginal
from zgain.cvae.gaussian import log_density
from zgain.cvae.marginal import mixture_marginal
from zgain.cvae.model import CVAE
from zgain.evaluate.decomposition import decomposition
from zgain.evaluate.scoring import evaluate_examples
from zgain.params import CVAEConfig

CPU = torch.device("cpu")
CVAE_CONFIG = CVAEConfig(
    latent_dim=2,
    encoder_layers=1,
    encoder_d_model=8,
    encoder_heads=2,
    prior="conditional",
    freeze_decoder="none",
    encoders_read_base=True,
    z_memory=False,
)


def _cvae(z_weight: float) -> CVAE:
    """A small CVAE whose z-injection weights are N(0, z_weight²) (0: the decoder ignores z)."""
    torch.manual_seed(0)
    model = CVAE(make_small_base(), CVAE_CONFIG)
    with torch.no_grad():
        model.z_injection.weight.normal_(std=z_weight)
        # Give the posterior and the prior different, non-trivial moments.
        torch.nn.init.normal_(model.posterior_encoder.out.weight, std=0.5)
        torch.nn.init.normal_(model.prior_encoder.out.weight, std=0.3)
    return model.eval()


def _scores(model: CVAE, k: int = 16):
    batch = random_batch(seed=3, batch_size=12)
    return evaluate_examples(
        model, batch, iw_samples=k, batch_size=5, max_x_len=5, device=CPU, seed=7
    ), batch


def test_a_decoder_that_ignores_z_has_m_equal_to_l_and_no_z_information() -> None:
    scores, _ = _scores(_cvae(z_weight=0.0))  # zero z-injection: the decoder ignores z
    # M and L average the same float32 log-probs over different samples: equal up to the float32
    # rounding of those passes, a few epsilons per token of the largest NLL.
    tol = 4 * scores.token_nll_post.shape[1] * np.finfo(np.float32).eps * scores.nll_post.max()
    np.testing.assert_allclose(scores.nll_marginal, scores.nll_post, rtol=0, atol=tol)
    np.testing.assert_allclose(scores.token_nll_marginal, scores.token_nll_post, rtol=0, atol=tol)
    assert np.all(scores.kl > 0.01)  # q and p differ: the equality is not a trivial one


@pytest.mark.parametrize("per_pass", [1, 7, 10_000])
def test_decoding_the_samples_in_groups_gives_the_same_values(monkeypatch, per_pass) -> None:
    model = _cvae(z_weight=1.0)
    monkeypatch.setattr(marginal, "DECODE_SEQUENCES", 10**9)
    whole, _ = _scores(model)
    monkeypatch.setattr(marginal, "DECODE_SEQUENCES", per_pass)  # 1 sample, 1-2 samples, all
    grouped, _ = _scores(model)
    # Every sequence is scored alone; only float32 rounding of very small passes may differ.
    for name, value in whole._asdict().items():
        np.testing.assert_allclose(getattr(grouped, name), value, rtol=0, atol=1e-6, err_msg=name)


def test_per_token_marginals_sum_to_m() -> None:
    scores, batch = _scores(_cvae(z_weight=0.7))
    np.testing.assert_allclose(scores.token_nll_marginal.sum(1), scores.nll_marginal, atol=1e-9)
    off_mask = ~batch.mask.numpy()
    assert np.all(scores.token_nll_marginal[off_mask] == 0)
    assert np.abs(scores.nll_marginal - scores.nll_post).max() > 1e-3  # z matters here


def _one_bit_world(
    n: int, k: int, *, seed: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """y reveals one fair bit among T = 10 tokens; the decoder reads it from sign(z_1).

    q is a narrow Gaussian at ±3 (KL to N(0, 1) ≈ 10 nats). Returns token_logp (n, K, T) for
    K/2 samples from q then K/2 from the prior, log p(z), log q(z) (n, K), and q-only token_logp
    for K samples from q.
    """
    gen = torch.Generator().manual_seed(seed)
    bit = torch.randint(0, 2, (n,), generator=gen).double() * 2 - 1  # ±1
    mu, logvar = 3.0 * bit[:, None], torch.full((n, 1), -12.0, dtype=torch.float64)
    zero = torch.zeros_like(mu)

    def draw(mean: torch.Tensor, log_var: torch.Tensor, m: int) -> torch.Tensor:
        eps = torch.randn((n, m, 1), generator=gen, dtype=torch.float64)
        return mean[:, None] + torch.exp(0.5 * log_var)[:, None] * eps

    def logp(z: torch.Tensor) -> torch.Tensor:
        right = torch.sign(z[..., 0]) == bit[:, None]  # (n, m)
        bit_token = torch.where(right, math.log(1 - 1e-4), math.log(1e-4))
        rest = torch.full((*bit_token.shape, 9), math.log(0.5), dtype=torch.float64)
        return torch.cat([bit_token[..., None], rest], dim=2)  # (n, m, T)

    z = torch.cat([draw(mu, logvar, k // 2), draw(zero, zero, k // 2)], dim=1)
    log_q = log_density(z, mu[:, None], logvar[:, None])
    log_p = log_density(z, zero[:, None], zero[:, None])
    z_q = draw(mu, logvar, k)
    q_only = (logp(z_q), log_density(z_q, zero[:, None], zero[:, None]))
    q_only_log_q = log_density(z_q, mu[:, None], logvar[:, None])
    return logp(z), log_p, torch.logaddexp(log_q, log_p) - math.log(2), (*q_only, q_only_log_q)


def test_one_bit_world_gives_log_2_with_the_mixture_and_far_more_with_q_alone() -> None:
    token_logp, log_p, log_pi, (q_logp, q_log_p, q_log_q) = _one_bit_world(300, 256, seed=0)
    marginal, _ = mixture_marginal(token_logp, log_p, log_pi)
    post = -token_logp[:, :128].sum(2).mean(1)  # L from the q half
    z_information = (marginal - post).mean().item()
    assert z_information == pytest.approx(math.log(2), abs=0.05)
    # q alone as proposal (Burda et al.): log mean_k p(z) p(y|z) / q(z), no normalization
    iwae = torch.logsumexp(q_log_p - q_log_q + q_logp.sum(2), dim=1) - math.log(256)
    q_only_information = (-iwae - post).mean().item()
    assert q_only_information > 5.0  # overstated by about KL ≈ 10 nats


def test_m_converges_to_the_exact_marginal_of_a_linear_gaussian_model() -> None:
    """z ~ N(0, 1), y_t | z ~ N(z, s²) for T = 4 tokens: p(y) = N(0, s² I + 1 1ᵀ) exactly."""
    n, t, s2 = 200, 4, 0.5
    gen = torch.Generator().manual_seed(1)
    z_true = torch.randn(n, generator=gen, dtype=torch.float64)
    y = z_true[:, None] + math.sqrt(s2) * torch.randn(n, t, generator=gen, dtype=torch.float64)
    cov = s2 * torch.eye(t, dtype=torch.float64) + torch.ones(t, t, dtype=torch.float64)
    exact = torch.distributions.MultivariateNormal(torch.zeros(t, dtype=torch.float64), cov)
    exact_nll = -exact.log_prob(y)  # −log p(y), nats
    # q: the exact posterior, shifted and too narrow (an imperfect encoder)
    post_var = 1.0 / (1.0 + t / s2)
    mu_q = (post_var * y.sum(1) / s2 + 0.3)[:, None]
    logvar_q = torch.full((n, 1), math.log(post_var / 4), dtype=torch.float64)
    zero = torch.zeros(n, 1, dtype=torch.float64)
    errors = []
    for k in (4, 64, 4096):
        eps_q = torch.randn((n, k // 2, 1), generator=gen, dtype=torch.float64)
        eps_p = torch.randn((n, k // 2, 1), generator=gen, dtype=torch.float64)
        z = torch.cat([mu_q[:, None] + torch.exp(0.5 * logvar_q)[:, None] * eps_q, eps_p], dim=1)
        token_logp = -0.5 * (math.log(2 * math.pi * s2) + (y[:, None, :] - z) ** 2 / s2)
        log_q = log_density(z, mu_q[:, None], logvar_q[:, None])
        log_p = log_density(z, zero[:, None], zero[:, None])
        marginal, _ = mixture_marginal(
            token_logp, log_p, torch.logaddexp(log_q, log_p) - math.log(2)
        )
        errors.append((marginal - exact_nll).abs().mean().item())
    assert errors[2] < errors[1] < errors[0]
    assert errors[2] < 0.05 and errors[2] < 0.3 * errors[0]


def test_decomposition_identity_and_oracle_row() -> None:
    rng = np.random.default_rng(0)
    n = 50
    base = rng.uniform(2, 5, n)
    post, marginal = base - rng.normal(0.2, 0.3, n), base - rng.normal(0.1, 0.2, n)
    info = rng.uniform(0, 1, n)
    out = decomposition(
        base=base,
        post=post,
        marginal=marginal,
        kl=rng.uniform(0, 2, n),
        shuffled=post + 1,
        prior=base,
        n_tokens=rng.integers(2, 8, n).astype(float),
        oracle_nll=base - 0.1,
        oracle_info=info,
    )
    assert out["gross_gain"] == pytest.approx(
        out["marginal_gain"] + out["z_information"], abs=1e-12
    )
    assert out["gross_gain"] == pytest.approx(np.mean(base - post), abs=1e-12)
    assert out["oracle_gross_gain"] == pytest.approx(
        out["oracle_marginal_gain"] + out["oracle_info"], abs=1e-9
    )
    assert out["capture"] == pytest.approx(np.mean(marginal - post) / info.mean())
    assert out["z_reliance"] == pytest.approx(1.0)
    assert out["frac_z_information_ceiling"] == pytest.approx(info.sum() / base.sum())
    assert out["z_information_se"] == pytest.approx(np.std(marginal - post, ddof=1) / math.sqrt(n))
