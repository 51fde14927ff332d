"""The CVAE's own code length for y given x: z marginalized by defensive-mixture sampling.

docs/method.md#evaluation-quantities. With K samples z_k from π = ½ q(z|x,y) + ½ p(z|x) (K/2
from each) and weights w_k = p(z_k|x) / π(z_k) ≤ 2, self-normalized:
p̂_K(y|x) = Σ_k w_k p(y|x,z_k) / Σ_k w_k. The bounded weights keep the estimate accurate when
q is much narrower than the model's own posterior (where q alone as proposal returns about
L + KL); self-normalizing makes M = L exactly when the decoder ignores z. It converges to
−log p(y|x) as K grows. Used by the evaluation and by the validation monitor of training.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import torch
from torch import Tensor

from zgain.core.environment import autocast_context
from zgain.core.nll import token_nll
from zgain.core.sequences import SeqBatch
from zgain.cvae.gaussian import log_density, sample
from zgain.cvae.model import CVAE


def mixture_marginal(
    token_logp: Tensor, log_prior_z: Tensor, log_proposal_z: Tensor
) -> tuple[Tensor, Tensor]:
    """M and m_t from K self-normalized importance samples.

    token_logp (B, K, T) log p(y_t | y_<t, x, z_k), 0 off the mask; log_prior_z and
    log_proposal_z (B, K) log p(z_k|x) and log π(z_k). With w_k = p(z_k|x)/π(z_k) normalized to
    sum to 1, P_t = log Σ_k w_k p(y_≤t | x, z_k) and P_{−1} = log Σ_k w_k = 0. Returns
    M (B,) = −P_last and m (B, T) with m_t = P_{t−1} − P_t, so Σ_t m_t = M exactly, m_t = 0 past
    the last supervised position, and M = L exactly for a decoder that ignores z.
    """
    log_weight = log_prior_z - log_proposal_z  # (B, K)
    log_weight = log_weight - torch.logsumexp(log_weight, dim=1, keepdim=True)
    prefix = torch.logsumexp(log_weight[:, :, None] + token_logp.cumsum(dim=2), dim=1)  # (B, T)
    shifted = torch.cat([prefix.new_zeros(prefix.shape[0], 1), prefix[:, :-1]], dim=1)
    return -prefix[:, -1], shifted - prefix


DECODE_SEQUENCES = 256
"""Most sequences (examples × samples) per decoder pass; speed only. On a 2-core CPU, passes
of 256 sequences scored 113 examples/s at K = 256, passes of 1,024 67 and of 32 65: the
activations of a few hundred sequences stay in cache, and fewer passes cost less Python
(bench/results.md, benchmark 3). Each sequence is scored alone, so the values are the same."""


def token_logp(model: CVAE, part: SeqBatch, z: Tensor, max_x_len: int) -> Tensor:
    """log p(y_t | y_<t, x, z) for every sample: z (B, n, D) -> (B, n, T) float64, 0 off mask.

    The samples go through the decoder in groups of at most DECODE_SEQUENCES sequences.
    """
    step = max(1, DECODE_SEQUENCES // z.shape[0])
    if step >= z.shape[1]:
        return _decode_logp(model, part, z, max_x_len)
    groups = [z[:, k : k + step] for k in range(0, z.shape[1], step)]
    return torch.cat([_decode_logp(model, part, g, max_x_len) for g in groups], dim=1)


def _decode_logp(model: CVAE, part: SeqBatch, z: Tensor, max_x_len: int) -> Tensor:
    b, n, _ = z.shape
    inputs = part.decoder_input.repeat_interleave(n, dim=0)  # (B·n, X+T)
    targets = part.targets.repeat_interleave(n, dim=0)
    mask = part.mask.repeat_interleave(n, dim=0)
    with autocast_context(inputs.device):
        logits = model.decode(inputs, z.reshape(b * n, -1), first=max_x_len)  # (B·n, T, V)
    return -token_nll(logits.float(), targets, mask).double().reshape(b, n, -1)


class MixtureScores(NamedTuple):
    """One batch scored under K defensive-mixture samples (nats, float64 where stated)."""

    z: Tensor  # (B, K, D): the first K/2 from q(z|x,y), the last K/2 from p(z|x)
    token_logp: Tensor  # (B, K, T) float64 log p(y_t | y_<t, x, z_k), 0 off the mask
    marginal: Tensor  # (B,) float64 M = −log p̂_K(y|x)
    token_marginal: Tensor  # (B, T) float64 m_t, Σ_t m_t = M
    mu_p: Tensor  # (B, D) prior mean
    logvar_p: Tensor  # (B, D) prior log-variance

    @property
    def half(self) -> int:
        return self.z.shape[1] // 2

    def posterior_nll(self) -> Tensor:
        """L (B,) float64: the mean sequence NLL over the K/2 posterior samples."""
        return -self.token_logp[:, : self.half].sum(dim=2).mean(dim=1)


def score_mixture(
    model: CVAE,
    part: SeqBatch,
    mu_q: Tensor,
    logvar_q: Tensor,
    n_samples: int,
    generator: torch.Generator | None,
    max_x_len: int,
) -> MixtureScores:
    """Draw K = n_samples latents from π = ½q + ½p(z|x) (K/2 each) and score y under each.

    mu_q, logvar_q (B, D) are the posterior's moments for `part`.
    """
    if n_samples < 2 or n_samples % 2:
        raise ValueError(f"n_samples must be even and >= 2 (half q, half prior), got {n_samples}")
    half = n_samples // 2
    mu_p, logvar_p = (t.float() for t in model.prior(part.prior_input))
    z = torch.cat(
        [
            sample(mu_q, logvar_q, half, generator),
            sample(mu_p, logvar_p, half, generator),
        ],
        dim=1,
    )  # (B, K, D)
    logp = token_logp(model, part, z, max_x_len)  # (B, K, T)
    z64 = z.double()
    log_q = log_density(z64, mu_q.double()[:, None], logvar_q.double()[:, None])
    log_p = log_density(z64, mu_p.double()[:, None], logvar_p.double()[:, None])
    log_pi = torch.logaddexp(log_q, log_p) - math.log(2.0)  # (B, K)
    marginal, token_marginal = mixture_marginal(logp, log_p, log_pi)
    return MixtureScores(z, logp, marginal, token_marginal, mu_p, logvar_p)
