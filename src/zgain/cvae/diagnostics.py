"""Training diagnostics of a CVAE: is the posterior used (active units)?"""

from __future__ import annotations

import numpy as np
import torch

from zgain.core.sequences import SeqBatch
from zgain.cvae.model import CVAE

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
