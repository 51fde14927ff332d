"""Per-example evaluation of a trained CVAE on the test split.

docs/method.md#evaluation-quantities. For every example, from one set of K latent samples drawn
from the defensive mixture π = ½ q(z|x,y) + ½ p(z|x) (the first K/2 from q, the last K/2 from
the prior: a deterministic-mixture allocation, unbiased for the mixture weights):

- L   = E_q[−log p(y|x,z)], the mean over the K/2 posterior samples;
- M   = −log p̂_K(y|x), p̂_K = Σ_k w_k p(y|x,z_k) / Σ_k w_k, w_k = p(z_k|x) / π(z_k) ≤ 2;
- m_t = −log p̂_K(y_t | y_<t, x) from the prefix marginals of the same samples, Σ_t m_t = M;
- L_prior (the K/2 prior samples), L_shuf (one posterior sample of another example), KL.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import torch
from torch import Tensor
from tqdm import tqdm

from zgain.core.sequences import SeqBatch, chunks, select
from zgain.cvae.gaussian import kl_divergence, sample
from zgain.cvae.marginal import score_mixture, token_logp
from zgain.cvae.model import CVAE


class PerExample(NamedTuple):
    """Arrays over the N test examples, nats (float64)."""

    nll_post: np.ndarray  # (N,) L_i
    nll_marginal: np.ndarray  # (N,) M_i
    nll_prior: np.ndarray  # (N,) z ~ p(z|x)
    nll_shuffled: np.ndarray  # (N,) z ~ q of another example
    token_nll_post: np.ndarray  # (N, T) ℓ_t averaged over the posterior samples, 0 off the mask
    token_nll_marginal: np.ndarray  # (N, T) m_t, 0 off the mask
    kl: np.ndarray  # (N,) KL(q(z|x,y) ‖ p(z|x)) summed over dims
    kl_per_dim: np.ndarray  # (N, D)
    mu: np.ndarray  # (N, D) posterior means
    logvar: np.ndarray  # (N, D)
    z_sample: np.ndarray  # (N, D) one z ~ q(z|x,y) per example


def shuffle_partner(n: int, generator: torch.Generator) -> Tensor:
    """A permutation without fixed points (a rotation of a random order): no example keeps its z."""
    if n < 2:
        raise ValueError(f"shuffling z across examples needs at least 2 examples, got {n}")
    order = torch.randperm(n, generator=generator)
    partner = torch.empty_like(order)
    partner[order] = order.roll(1)
    return partner


@torch.no_grad()
def evaluate_examples(
    model: CVAE,
    batch: SeqBatch,
    *,
    iw_samples: int,
    batch_size: int,
    max_x_len: int,
    device: torch.device,
    seed: int,
) -> PerExample:
    """Score every example of `batch` with K = iw_samples mixture samples; deterministic per seed.

    batch_size counts examples per forward pass (each expands to K sequences).
    """
    model.eval().to(device)
    generator = torch.Generator(device=device).manual_seed(seed)
    n = batch.targets.shape[0]
    partner = shuffle_partner(n, torch.Generator().manual_seed(seed)).to(device)
    # The shuffled condition takes another example's posterior sample: all posteriors first.
    posteriors = [
        model.posterior(select(batch, rows).encoder_input.to(device)) for rows in chunks(n, 512)
    ]
    mu_all = torch.cat([mu.float() for mu, _ in posteriors])
    logvar_all = torch.cat([logvar.float() for _, logvar in posteriors])
    z_shuffled = sample(mu_all, logvar_all, 1, generator)[partner]  # (N, 1, D)
    out: dict[str, list[np.ndarray]] = {name: [] for name in PerExample._fields}
    for rows in tqdm(list(chunks(n, batch_size)), desc="evaluate", unit="batch"):
        part = select(batch, rows).to(device)
        mu_q, logvar_q = mu_all[rows], logvar_all[rows]
        mixture = score_mixture(model, part, mu_q, logvar_q, iw_samples, generator, max_x_len)
        half = mixture.half
        token_post = -mixture.token_logp[:, :half].mean(dim=1)  # (B, T)
        shuffled = -token_logp(model, part, z_shuffled[rows], max_x_len).sum(dim=2)[:, 0]
        kl_dims = kl_divergence(
            *(t.double() for t in (mu_q, logvar_q, mixture.mu_p, mixture.logvar_p))
        )  # (B, D), float64 so that the per-dimension values sum to the total exactly
        values = {
            "nll_post": token_post.sum(dim=1),
            "nll_marginal": mixture.marginal,
            "nll_prior": -mixture.token_logp[:, half:].sum(dim=2).mean(dim=1),
            "nll_shuffled": shuffled,
            "token_nll_post": token_post,
            "token_nll_marginal": mixture.token_marginal,
            "kl": kl_dims.sum(dim=1),
            "kl_per_dim": kl_dims,
            "mu": mu_q,
            "logvar": logvar_q,
            "z_sample": mixture.z[:, 0],
        }
        for name, tensor in values.items():
            out[name].append(tensor.double().cpu().numpy())
    return PerExample(**{name: np.concatenate(parts) for name, parts in out.items()})
