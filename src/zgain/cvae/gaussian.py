"""Diagonal Gaussians over the latent z: the log-variance range, draws, log-density and KL.

One definition serves training (reparameterized draws, the KL term), the evaluation's mixture
importance sampling and the I_q(x; z) estimator (docs/method.md#evaluation-quantities). The
functions take torch tensors; `sample`, `clamp_logvar` and `log_density` also take NumPy arrays
(float64, with a `numpy.random.Generator`), which the estimator uses, by the same formula.
"""

from __future__ import annotations

import math
from typing import TypeVar

import numpy as np
import torch
from torch import Tensor

LOGVAR_MIN, LOGVAR_MAX = -10.0, 10.0
"""Range log sigma^2 is clamped to, so exp(logvar) neither overflows nor underflows."""
LOG_2PI = math.log(2.0 * math.pi)

A = TypeVar("A", Tensor, np.ndarray)


def clamp_logvar(logvar: A) -> A:
    """logvar clamped to [LOGVAR_MIN, LOGVAR_MAX]; values inside the range are unchanged."""
    if isinstance(logvar, Tensor):
        return logvar.clamp(LOGVAR_MIN, LOGVAR_MAX)
    return np.clip(logvar, LOGVAR_MIN, LOGVAR_MAX)


def sample(mu: A, logvar: A, n: int, generator: torch.Generator | np.random.Generator | None) -> A:
    """n draws per row, z = mu + sigma * eps: mu, logvar (B, D) -> z (B, n, D).

    Tensors draw eps from the torch `generator` on mu's device and dtype; NumPy arrays from the
    NumPy `generator` in float64. The log-variance is clamped first.
    """
    shape = (mu.shape[0], n, mu.shape[1])
    if isinstance(mu, Tensor):
        eps = torch.randn(shape, generator=generator, device=mu.device, dtype=mu.dtype)
    else:
        if not isinstance(generator, np.random.Generator):
            raise TypeError("NumPy draws need a numpy.random.Generator")
        eps = generator.standard_normal(shape)
    return shift_scale(mu, logvar, eps)


def shift_scale(mu: A, logvar: A, eps: A) -> A:
    """z = mu + sigma * eps for standard-normal eps: mu, logvar (B, D), eps (B, n, D) -> z
    (B, n, D), the log-variance clamped first (`sample` with its noise drawn by the caller)."""
    if isinstance(mu, Tensor):
        std = torch.exp(0.5 * clamp_logvar(logvar))
    else:
        std = np.exp(0.5 * clamp_logvar(logvar))
    return mu[:, None, :] + std[:, None, :] * eps


def reparameterize(mu: Tensor, logvar: Tensor, generator: torch.Generator | None = None) -> Tensor:
    """One draw per row with eps ~ N(0, I): mu, logvar (B, Dz) -> z (B, Dz)."""
    return sample(mu, logvar, 1, generator)[:, 0]


def log_density(z: A, mu: A | float, logvar: A | float) -> A:
    """log N(z; mu, diag exp(logvar)) summed over the last axis, nats; broadcasts to (...).

    NumPy inputs are taken in float64.
    """
    if isinstance(z, Tensor):
        return -0.5 * (LOG_2PI + logvar + (z - mu).square() * torch.exp(-logvar)).sum(-1)
    z, mu, logvar = (np.asarray(a, dtype=np.float64) for a in (z, mu, logvar))
    return -0.5 * np.sum(LOG_2PI + logvar + (z - mu) ** 2 * np.exp(-logvar), -1)


def kl_divergence(mu_q: Tensor, logvar_q: Tensor, mu_p: Tensor, logvar_p: Tensor) -> Tensor:
    """KL(q ‖ p) between diagonal Gaussians, per dimension, in nats (≥ 0).

    All inputs (B, D) (or broadcastable to it), log-variances in log nats² -> (B, D).
    """
    log_ratio = logvar_q - logvar_p  # log σ_q² / σ_p²
    # expm1(r) − r ≥ 0 keeps the variance part exact near r = 0, where exp(r) − 1 − r cancels.
    variance_part = torch.expm1(log_ratio) - log_ratio
    mean_part = (mu_q - mu_p).square() * torch.exp(-logvar_p)
    # The clamp only removes rounding below 0: the true value is never negative.
    return (0.5 * (variance_part + mean_part)).clamp_min(0.0)
