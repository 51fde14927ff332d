"""Per-example evaluation of a trained CVAE on the test split.

docs/method.md#evaluation-quantities.

For every example: the sequence NLL with z from the posterior (mean over S samples), from the
prior, shuffled across examples and z = 0; KL(q ‖ p); the importance-weighted log p̂_K(y | x);
the per-token gain b_t − ℓ_t; and the posterior moments used by the aggregate metrics.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import torch
from torch import Tensor
from tqdm import tqdm

from zgain.core.environment import autocast_context
from zgain.core.nll import token_nll
from zgain.core.sequences import SeqBatch, chunks, select, target_frame
from zgain.cvae.model import CVAE, kl_diag_gaussians, reparameterize
from zgain.evaluate.estimators import gaussian_log_density, iw_log_likelihood


class PerExample(NamedTuple):
    """Arrays over the N test examples, nats."""

    nll_post: np.ndarray  # (N,) L_i, mean over S posterior samples of Σ_t ℓ_t
    nll_prior: np.ndarray  # (N,) z ~ p(z|x), mean over S samples
    nll_shuffled: np.ndarray  # (N,) z drawn from q of another example
    nll_zero: np.ndarray  # (N,) z = 0
    token_nll_post: np.ndarray  # (N, T) ℓ_t averaged over the S posterior samples, 0 off the mask
    kl: np.ndarray  # (N,) KL(q(z|x,y) ‖ p(z|x)) summed over dims
    kl_per_dim: np.ndarray  # (N, D)
    log_lik_iw: np.ndarray  # (N,) log p̂_K(y | x)
    mu: np.ndarray  # (N, D) posterior means
    logvar: np.ndarray  # (N, D)


def _sequence_nll(model: CVAE, part: SeqBatch, z: Tensor, max_x_len: int) -> Tensor:
    """Per-token NLL (B, T) of the decoder for latents z (B, D)."""
    logits = target_frame(model.decode(part.decoder_input, z), max_x_len)
    return token_nll(logits.float(), part.targets, part.mask)


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
    posterior_samples: int,
    iw_samples: int,
    batch_size: int,
    max_x_len: int,
    device: torch.device,
    seed: int,
) -> PerExample:
    """Score every example of `batch`; deterministic for a fixed seed."""
    model.eval().to(device)
    generator = torch.Generator(device=device).manual_seed(seed)
    n = batch.targets.shape[0]
    out: dict[str, list[np.ndarray]] = {name: [] for name in PerExample._fields}
    partner = shuffle_partner(n, torch.Generator().manual_seed(seed))
    # z for the shuffled condition comes from another example's posterior: compute all first.
    all_mu, all_logvar = [], []
    for rows in chunks(n, batch_size):
        mu, logvar = model.posterior(select(batch, rows).encoder_input.to(device))
        all_mu.append(mu.float())
        all_logvar.append(logvar.float())
    mu_all, logvar_all = torch.cat(all_mu), torch.cat(all_logvar)
    z_shuffled = reparameterize(mu_all, logvar_all, generator)[partner.to(device)]
    for rows in tqdm(list(chunks(n, batch_size)), desc="evaluate", unit="batch"):
        part = select(batch, rows).to(device)
        mu_q, logvar_q = mu_all[rows], logvar_all[rows]
        mu_p, logvar_p = model.prior(part.prior_input)
        mu_p, logvar_p = mu_p.float(), logvar_p.float()
        with autocast_context(device):
            samples = [
                reparameterize(mu_q, logvar_q, generator)
                for _ in range(max(iw_samples, posterior_samples))
            ]
            token_nlls = [_sequence_nll(model, part, z, max_x_len) for z in samples]  # each (B, T)
            prior_nll = [
                _sequence_nll(
                    model, part, reparameterize(mu_p, logvar_p, generator), max_x_len
                ).sum(1)
                for _ in range(posterior_samples)
            ]
            shuffled = _sequence_nll(model, part, z_shuffled[rows], max_x_len).sum(1)
            zero = _sequence_nll(model, part, torch.zeros_like(mu_q), max_x_len).sum(1)
        post_tokens = torch.stack(token_nlls[:posterior_samples]).double().mean(0)  # (B, T)
        z_iw = (
            torch.stack(samples[:iw_samples], dim=1).cpu().numpy().astype(np.float64)
        )  # (B, K, D)
        log_p_y = (
            -torch.stack(token_nlls[:iw_samples], dim=1).sum(2).cpu().numpy().astype(np.float64)
        )  # (B, K)
        moments = [
            t.cpu().numpy().astype(np.float64)[:, None, :] for t in (mu_p, logvar_p, mu_q, logvar_q)
        ]
        log_prior = gaussian_log_density(z_iw, moments[0], moments[1])
        log_q = gaussian_log_density(z_iw, moments[2], moments[3])
        kl_dims = kl_diag_gaussians(mu_q, logvar_q, mu_p, logvar_p)
        values = {
            "nll_post": post_tokens.sum(1),
            "nll_prior": torch.stack(prior_nll).mean(0),
            "nll_shuffled": shuffled,
            "nll_zero": zero,
            "token_nll_post": post_tokens,
            "kl": kl_dims.sum(1),
            "kl_per_dim": kl_dims,
            "mu": mu_q,
            "logvar": logvar_q,
        }
        for name, tensor in values.items():
            out[name].append(tensor.double().cpu().numpy())
        out["log_lik_iw"].append(iw_log_likelihood(log_p_y, log_prior, log_q))
    return PerExample(**{name: np.concatenate(parts) for name, parts in out.items()})
