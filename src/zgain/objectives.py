"""Reconstruction objectives (SPEC §4), KL terms and β schedules.

Tensors in, tensors out: every function is pure, keeps no state and reduces no earlier than its
docstring says. All losses are costs (≥ 0, to minimise) in nats. Shapes: B examples, T positions,
V vocabulary, D latent dimensions. The frozen base surprisal b is detached wherever it is read,
so no weight derived from it carries a gradient.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, NamedTuple

import torch
import torch.nn.functional as F
from torch import Tensor

RECON_TERMS: tuple[str, ...] = ("mean", "sum", "dist", "ex", "tok", "cc", "inv")
BetaSchedule = Literal["constant", "linear", "cyclical"]
BETA_SCHEDULES: tuple[str, ...] = ("constant", "linear", "cyclical")
# Stand-in target at unsupervised positions: any in-vocabulary id works, its loss is discarded.
_PLACEHOLDER_TARGET = 0
# Exponent α of the token weights (b_t + ε)^α that gives §4.7's inverse-surprisal weights.
_INVERSE_ALPHA = -1.0


def token_nll(logits: Tensor, targets: Tensor, mask: Tensor) -> Tensor:
    """Per-token negative log-likelihood in nats.

    logits (B, T, V), targets (B, T) int64, mask (B, T) bool -> (B, T), 0 where mask is False.
    Targets at unsupervised positions may hold any id (PAD, or even out of range).
    """
    if logits.dim() != 3 or targets.shape != logits.shape[:2] or mask.shape != targets.shape:
        shapes = [tuple(t.shape) for t in (logits, targets, mask)]
        raise ValueError(f"need logits (B, T, V), targets and mask (B, T); got shape {shapes}")
    safe_targets = torch.where(mask, targets, _PLACEHOLDER_TARGET)
    nll = F.cross_entropy(logits.transpose(1, 2), safe_targets, reduction="none")  # (B, T)
    return torch.where(mask, nll, 0.0)


def _check_batch(
    nll: Tensor, surprisal: Tensor, mask: Tensor, normalizer: float, eps: float
) -> None:
    for name, value in (("normalizer", normalizer), ("eps", eps)):
        if not value > 0:
            raise ValueError(f"{name} must be > 0, got {value}")
    if mask.dtype != torch.bool:
        raise ValueError(f"mask must be bool, got {mask.dtype}")
    if mask.dim() != 2 or nll.shape != mask.shape or surprisal.shape != mask.shape:
        raise ValueError(
            f"nll, surprisal and mask must share one (B, T) shape; got nll {tuple(nll.shape)}, "
            f"surprisal {tuple(surprisal.shape)}, mask {tuple(mask.shape)}"
        )
    # An example without supervised positions has no b_i (0/0): that is a data error upstream.
    if not bool(mask.any(dim=1).all()):
        raise ValueError("mask: every example needs at least one supervised position")


def masked_sum(values: Tensor, mask: Tensor) -> Tensor:
    """Sum over supervised positions: values (B, T), mask (B, T) bool -> (B,), same units."""
    return torch.where(mask, values, 0.0).sum(dim=1)


def masked_mean(values: Tensor, mask: Tensor) -> Tensor:
    """Mean over supervised positions (T_i = mask.sum(1)): (B, T), (B, T) bool -> (B,)."""
    return masked_sum(values, mask) / mask.sum(dim=1).to(values.dtype)


def power_weights(surprisal: Tensor, mask: Tensor, *, alpha: float, eps: float) -> Tensor:
    """Token weights ∝ (b_t + ε)^α, summing to 1 over each example's supervised positions.

    surprisal (B, T) nats, mask (B, T) bool -> (B, T) dimensionless, 0 where masked, no gradient.
    α = 0 is uniform (1/T_i), α = −1 is §4.7's v, α = 1 is §4.5's w up to O(ε).
    """
    b = torch.where(mask, surprisal.detach(), 0.0)
    raw = torch.where(mask, (b + eps).pow(alpha), 0.0)
    return raw / raw.sum(dim=1, keepdim=True)


def token_share_weights(surprisal: Tensor, mask: Tensor, eps: float) -> Tensor:
    """§4.5 surprisal shares w_t = b_t / (B_i + ε): (B, T) nats, (B, T) bool -> (B, T), no grad."""
    b = torch.where(mask, surprisal.detach(), 0.0)
    return b / (b.sum(dim=1, keepdim=True) + eps)


def inverse_surprisal_weights(surprisal: Tensor, mask: Tensor, eps: float) -> Tensor:
    """§4.7 weights v_t = (b_t+ε)^−1 / Σ_s (b_s+ε)^−1: (B, T), (B, T) bool -> (B, T), no grad."""
    return power_weights(surprisal, mask, alpha=_INVERSE_ALPHA, eps=eps)


def concentration(weights: Tensor, mask: Tensor) -> Tensor:
    """Concentration Σ_t w_t² of normalised token weights: (B, T), (B, T) bool -> (B,).

    1/T_i for uniform weights, 1 when one token holds all the weight.
    """
    return masked_sum(weights.detach().square(), mask)


def concentration_correction(
    weights: Tensor, surprisal: Tensor, mask: Tensor, eps: float
) -> Tensor:
    """§4.6 example weight c_i = b_i / (Σ_t w_t b_t + ε), dimensionless, no gradient.

    weights (B, T) summing to 1 per example, surprisal (B, T) nats, mask (B, T) bool -> (B,).
    For the share weights w of §4.5, c_i = 1 / (T_i Σ_t w_t²) up to ε.
    """
    b = surprisal.detach()
    weighted_surprisal = masked_sum(weights.detach() * b, mask)
    return masked_mean(b, mask) / (weighted_surprisal + eps)


class ReconTerms(NamedTuple):
    """The seven reconstruction terms of SPEC §4.1–4.7, each a scalar batch mean (nats or ratio)."""

    mean: Tensor
    sum: Tensor
    dist: Tensor
    ex: Tensor
    tok: Tensor
    cc: Tensor
    inv: Tensor


def reconstruction_terms(
    nll: Tensor, surprisal: Tensor, mask: Tensor, normalizer: float, eps: float
) -> ReconTerms:
    """Every reconstruction term of SPEC §4.1–4.7 from one batch.

    nll ℓ (B, T) nats from the decoder, surprisal b (B, T) nats from the frozen base (detached
    here), mask (B, T) bool of supervised positions (ragged: T_i = mask.sum(1)); normalizer N is
    the train-split mean of b_i in nats, eps ε guards divisions. Masked positions contribute
    nothing, whatever they hold. Returns scalar tensors; only ℓ carries gradient.
    """
    _check_batch(nll, surprisal, mask, normalizer, eps)
    ell = torch.where(mask, nll, 0.0)  # (B, T); where, not a product, so NaN garbage cannot leak
    seq_nll = ell.sum(dim=1)  # L_i, (B,)
    mean_nll = seq_nll / mask.sum(dim=1).to(ell.dtype)  # ℓ̄_i, (B,)
    surprisal_mean = masked_mean(surprisal.detach(), mask)  # b_i, (B,)

    share = token_share_weights(surprisal, mask, eps)  # w, (B, T)
    inverse = inverse_surprisal_weights(surprisal, mask, eps)  # v, (B, T)
    share_nll = (share * ell).sum(dim=1)  # Σ_t w_t ℓ_t, (B,)
    inverse_nll = (inverse * ell).sum(dim=1)  # Σ_t v_t ℓ_t, (B,)
    share_correction = concentration_correction(share, surprisal, mask, eps)  # c_i
    inverse_correction = concentration_correction(inverse, surprisal, mask, eps)  # c'_i

    r_mean = mean_nll.mean()
    return ReconTerms(
        mean=r_mean,
        sum=seq_nll.mean(),
        dist=r_mean / normalizer,
        ex=(mean_nll / (surprisal_mean + eps)).mean(),
        tok=share_nll.mean(),
        cc=(share_correction * share_nll).mean() / normalizer,
        inv=(inverse_correction * inverse_nll).mean() / normalizer,
    )


def reconstruction(terms: ReconTerms, weights: Mapping[str, float]) -> Tensor:
    """The objective R = Σ_k λ_k · term_k over the names of RECON_TERMS, as a scalar tensor.

    Names missing from weights count as λ = 0; terms with λ = 0 are skipped (so a non-finite
    unused term cannot poison R). Unknown names raise ValueError.
    """
    unknown = sorted(set(weights) - set(RECON_TERMS))
    if unknown:
        raise ValueError(f"unknown reconstruction weight(s) {unknown}; expected {RECON_TERMS}")
    total = terms.mean.new_zeros(())
    for name, value in terms._asdict().items():
        weight = weights.get(name, 0.0)
        if weight != 0.0:
            total = total + weight * value
    return total


def unified_reconstruction(
    nll: Tensor,
    surprisal: Tensor,
    mask: Tensor,
    *,
    alpha: float,
    gamma: float,
    concentration: bool,
    token_sum: bool,
    eta: float,
    normalizer: float,
    eps: float,
) -> Tensor:
    """The §4.8 family R = N^−η · mean_i (b_i+ε)^−γ · [T_i] · [c_i] · Σ_t w_t ℓ_t, scalar.

    Token weights w_t ∝ (b_t+ε)^α sum to 1 per example; c_i = b_i / (Σ_t w_t b_t + ε) when
    `concentration`; the factor T_i only when `token_sum`. Shapes and units as in
    reconstruction_terms. The rows of §4 are the settings (others False / 0):

    - 4.1 mean: α=0, γ=0, η=0            - 4.2 sum: α=0, token_sum
    - 4.3 dist: α=0, η=1                 - 4.4 ex: α=0, γ=1
    - 4.5 tok: α=1                       - 4.6 cc: α=1, concentration, η=1
    - 4.7 inv: α=−1, concentration, η=1

    With α=1 the weights are (b_t+ε)/(B_i+T_i ε), which match §4.5's b_t/(B_i+ε) only up to
    O(ε), so rows 4.5 and 4.6 are reproduced up to O(ε); the others to rounding.
    """
    _check_batch(nll, surprisal, mask, normalizer, eps)
    ell = torch.where(mask, nll, 0.0)  # (B, T)
    weights = power_weights(surprisal, mask, alpha=alpha, eps=eps)  # (B, T)
    per_example = (weights * ell).sum(dim=1)  # weighted token-mean, (B,)
    if concentration:
        per_example = per_example * concentration_correction(weights, surprisal, mask, eps)
    if token_sum:
        per_example = per_example * mask.sum(dim=1).to(ell.dtype)
    example_weight = (masked_mean(surprisal.detach(), mask) + eps).pow(-gamma)  # (B,)
    return (example_weight * per_example).mean() * normalizer ** (-eta)


def kl_diag_gaussians(mu_q: Tensor, logvar_q: Tensor, mu_p: Tensor, logvar_p: Tensor) -> Tensor:
    """KL(q ‖ p) between diagonal Gaussians, per dimension, in nats (≥ 0).

    All inputs (B, D) (or broadcastable to it), log-variances in log nats² -> (B, D).
    """
    log_ratio = logvar_q - logvar_p  # log σ_q² / σ_p²
    # expm1(r) − r ≥ 0 keeps the variance part exact near r = 0, where exp(r) − 1 − r cancels.
    variance_part = torch.expm1(log_ratio) - log_ratio
    mean_part = (mu_q - mu_p).square() * torch.exp(-logvar_p)
    # The clamp only removes rounding below 0: the true value is never negative.
    return (0.5 * (variance_part + mean_part)).clamp_min(0.0)


def free_bits_kl(kl_per_dim: Tensor, free_bits: float) -> Tensor:
    """Free-bits KL Σ_j max(λ_fb, mean_b KL_bj) (Kingma et al. 2016), nats, scalar.

    kl_per_dim (B, D) nats; free_bits λ_fb ≥ 0 nats per dimension (0 → plain batch-mean KL).
    A dimension below the floor contributes exactly λ_fb and receives no gradient.
    """
    if free_bits < 0:
        raise ValueError(f"free_bits must be >= 0, got {free_bits}")
    return kl_per_dim.mean(dim=0).clamp_min(free_bits).sum()


def beta_at(
    step: int,
    *,
    schedule: BetaSchedule,
    beta: float,
    warmup_steps: int,
    n_cycles: int,
    ramp_fraction: float,
    total_steps: int,
) -> float:
    """KL weight β at an optimisation step, a pure function of the step.

    constant: β. linear: β·min(1, step / warmup_steps) (warmup_steps = 0 → β). cyclical
    (Fu et al. 2019): total_steps split into n_cycles equal cycles; in each, β ramps linearly
    0 → β over the first ramp_fraction of the cycle, then holds; from total_steps on it holds β.
    Arguments a schedule does not use are not checked.
    """
    if schedule not in BETA_SCHEDULES:
        raise ValueError(f"schedule must be one of {BETA_SCHEDULES}, got {schedule!r}")
    if step < 0:
        raise ValueError(f"step must be >= 0, got {step}")
    if beta < 0:
        raise ValueError(f"beta must be >= 0, got {beta}")
    if schedule == "constant":
        return beta
    if schedule == "linear":
        if warmup_steps < 0:
            raise ValueError(f"warmup_steps must be >= 0, got {warmup_steps}")
        if warmup_steps == 0:
            return beta
        return beta * min(1.0, step / warmup_steps)
    if n_cycles < 1:
        raise ValueError(f"n_cycles must be >= 1, got {n_cycles}")
    if total_steps < n_cycles:
        raise ValueError(f"total_steps must be >= n_cycles ({n_cycles}), got {total_steps}")
    if not 0 < ramp_fraction <= 1:
        raise ValueError(f"ramp_fraction must be in (0, 1], got {ramp_fraction}")
    if step >= total_steps:
        return beta
    # Position within the cycle in units of total_steps / n_cycles, kept integer so that each
    # cycle starts at exactly 0.
    position = (step * n_cycles) % total_steps
    return beta * min(1.0, position / (ramp_fraction * total_steps))


def bow_loss(bow_logits: Tensor, targets: Tensor, mask: Tensor) -> Tensor:
    """Bag-of-words NLL −Σ_t log softmax(bow_logits)[y_t] over content targets, in nats.

    bow_logits (B, V_content), targets (B, T) int64, mask (B, T) bool -> (B,). Only supervised
    positions whose target is a content id (< V_content) count; EOS and PAD ids lie above it.
    """
    n_content = bow_logits.shape[-1]
    content = mask & (targets >= 0) & (targets < n_content)  # (B, T)
    log_probs = F.log_softmax(bow_logits, dim=-1)  # (B, V_content)
    safe_targets = torch.where(content, targets, _PLACEHOLDER_TARGET)
    target_log_probs = log_probs.gather(1, safe_targets)  # (B, T)
    return -torch.where(content, target_log_probs, 0.0).sum(dim=1)


class LossTerms(NamedTuple):
    """Every scalar of the CVAE loss, all costs (≥ 0) in nats, logged under these names.

    total = recon + beta·kl_fb + λ_bow·bow. kl is the raw batch-mean KL summed over dimensions,
    kl_fb its free-bits form (the one in total); bow is the batch-mean BoW NLL (0 when absent);
    recon_<k> are the unweighted §4 terms whose λ-combination is recon.
    """

    total: Tensor
    recon: Tensor
    kl: Tensor
    kl_fb: Tensor
    bow: Tensor
    beta: Tensor
    recon_mean: Tensor
    recon_sum: Tensor
    recon_dist: Tensor
    recon_ex: Tensor
    recon_tok: Tensor
    recon_cc: Tensor
    recon_inv: Tensor
    recon_unified: Tensor

    def as_floats(self) -> dict[str, float]:
        """{field name: value} for logging, read back from the device in one transfer."""
        values = torch.stack([term.detach().to(torch.float64).reshape(()) for term in self])
        return dict(zip(self._fields, values.tolist(), strict=True))


def loss_terms(
    nll: Tensor,
    surprisal: Tensor,
    mask: Tensor,
    *,
    weights: Mapping[str, float],
    normalizer: float,
    eps: float,
    kl_per_dim: Tensor,
    beta: float,
    free_bits: float,
    bow: Tensor | None = None,
    bow_weight: float = 0.0,
    unified: Mapping[str, float | bool] | None = None,
    unified_weight: float = 0.0,
) -> LossTerms:
    """The full loss R + β·KL_fb + λ_bow·mean(BoW) and its parts (SPEC §4).

    nll, surprisal (B, T) nats, mask (B, T) bool, kl_per_dim (B, D) nats, bow (B,) nats or None;
    weights are the λ of reconstruction(), beta the current β (see beta_at); unified holds the
    keyword settings of unified_reconstruction() (alpha, gamma, concentration, token_sum, eta),
    added to recon with weight unified_weight.
    """
    if beta < 0:
        raise ValueError(f"beta must be >= 0, got {beta}")
    if bow_weight < 0:
        raise ValueError(f"bow_weight must be >= 0, got {bow_weight}")
    if bow is None and bow_weight != 0:
        raise ValueError(f"bow_weight is {bow_weight} but no bow loss was given")
    terms = reconstruction_terms(nll, surprisal, mask, normalizer, eps)
    recon = reconstruction(terms, weights)
    recon_unified = recon.new_zeros(())
    if unified_weight < 0:
        raise ValueError(f"unified_weight must be >= 0, got {unified_weight}")
    if unified_weight > 0:
        if unified is None:
            raise ValueError(
                f"unified_weight is {unified_weight} but no unified settings were given"
            )
        recon_unified = unified_reconstruction(
            nll, surprisal, mask, normalizer=normalizer, eps=eps, **unified
        )
        recon = recon + unified_weight * recon_unified
    kl = kl_per_dim.sum(dim=1).mean()
    kl_fb = free_bits_kl(kl_per_dim, free_bits)
    bow_mean = recon.new_zeros(()) if bow is None else bow.mean()
    total = recon + beta * kl_fb
    if bow_weight != 0:
        total = total + bow_weight * bow_mean
    return LossTerms(
        total, recon, kl, kl_fb, bow_mean, recon.new_tensor(beta), *terms, recon_unified
    )
