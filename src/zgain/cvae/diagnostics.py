"""Training diagnostics of a CVAE: is the posterior used, and what does the model gain?

The validation pass scores held-out examples with the same decomposition as the evaluation
(`zgain.core.gains`): G^marg = mean(B − M), I^θ = mean(M − L), on a few
hundred examples and fewer samples, to watch fine-tuning damage and z-use while training.
"""

from __future__ import annotations

import numpy as np
import torch

from zgain.core.gains import gain_means
from zgain.core.sequences import SeqBatch, chunks, select
from zgain.cvae.gaussian import kl_divergence
from zgain.cvae.marginal import score_mixture
from zgain.cvae.model import CVAE

VALIDATION_CHUNK = 64
"""Validation examples per forward pass (each expands to K sequences); speed only."""

ACTIVE_UNIT_THRESHOLD: float = 0.01
"""Cov_x E_q[z_d | x] above which dimension d counts as active (Burda et al. 2016)."""


def active_units(
    mu: np.ndarray, threshold: float = ACTIVE_UNIT_THRESHOLD
) -> tuple[int, np.ndarray]:
    """Count posterior dimensions whose mean moves with x (Burda et al. 2016).

    mu (N, D): E_q[z | x_i] per example. Returns (count of dims with variance > threshold,
    per-dim variance (D,)), the variance across examples with ddof = 1 as in He et al.'s code.
    """
    mu = np.asarray(mu, dtype=np.float64)
    if mu.ndim != 2 or mu.shape[0] < 2:
        raise ValueError(f"mu must have shape (N, D) with N >= 2, got {mu.shape}")
    variance = mu.var(axis=0, ddof=1)  # (D,)
    return int(np.count_nonzero(variance > threshold)), variance


@torch.no_grad()
def posterior_usage(model: CVAE, batch: SeqBatch, device: torch.device) -> dict[str, float]:
    """Active units (Cov_x E_q[z] > 0.01) on a fixed validation batch."""
    was_training = model.training
    model.eval()
    mu, _ = model.posterior(batch.encoder_input.to(device))
    model.train(was_training)
    count, variance = active_units(mu.float().cpu().numpy().astype("float64"))
    return {
        "active_units": float(count),
        **{f"mu_var_{j}": float(v) for j, v in enumerate(variance)},
    }


@torch.no_grad()
def validation_decomposition(
    model: CVAE,
    batch: SeqBatch,
    base_nll: torch.Tensor,
    *,
    n_samples: int,
    max_x_len: int,
    device: torch.device,
    seed: int,
) -> dict[str, float]:
    """val_gross_gain, val_marginal_gain, val_z_information, val_kl on `batch` (nats/seq).

    base_nll (N,) is the frozen base's B of each example of `batch`. The same seed gives the
    same latent samples at every pass, so the curve moves only with the model.
    """
    was_training = model.training
    model.eval()
    generator = torch.Generator(device=device).manual_seed(seed)
    post, marginal, kl = [], [], []
    for rows in chunks(batch.targets.shape[0], VALIDATION_CHUNK):
        part = select(batch, rows).to(device)
        mu_q, logvar_q = (t.float() for t in model.posterior(part.encoder_input))
        mixture = score_mixture(model, part, mu_q, logvar_q, n_samples, generator, max_x_len)
        post.append(mixture.posterior_nll())
        marginal.append(mixture.marginal)
        kl.append(kl_divergence(mu_q, logvar_q, mixture.mu_p, mixture.logvar_p).sum(dim=1))
    model.train(was_training)
    b = base_nll.double().to(device)
    gains = gain_means(b, torch.cat(post), torch.cat(marginal), torch.cat(kl))
    values = torch.stack([value.double() for value in gains.values()]).cpu().tolist()
    return {f"val_{name}": value for name, value in zip(gains, values, strict=True)}
