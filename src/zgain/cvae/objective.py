"""The CVAE objective: R / R₀ (the variant's weighted terms over their value on the frozen base)
+ β(step)·KL_fb + λ_bow·BoW.

docs/method.md#the-loss-and-kl-schedules and docs/method.md#scale-free-control. Tensors in,
tensors out: every function is pure, keeps no state and reduces no earlier than its docstring
says. All losses are costs (≥ 0, to minimise) in nats. Shapes: B examples, T positions,
V vocabulary, D latent dimensions.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor

from zgain.core.errors import ParamsError
from zgain.core.nll import PLACEHOLDER_TARGET
from zgain.cvae.rate import BetaSchedule, make_schedule
from zgain.cvae.terms import TERMS, TermBatch, unknown_weights
from zgain.params import CommonCVAEParams, ResolvedVariant, UnifiedParams


def free_bits_kl(kl_per_dim: Tensor, free_bits: float) -> Tensor:
    """Free-bits KL Σ_j max(λ_fb, mean_b KL_bj) (Kingma et al. 2016), nats, scalar.

    kl_per_dim (B, D) nats; free_bits λ_fb ≥ 0 nats per dimension (0 → plain batch-mean KL).
    A dimension below the floor contributes exactly λ_fb and receives no gradient.
    """
    if free_bits < 0:
        raise ValueError(f"free_bits must be >= 0, got {free_bits}")
    return kl_per_dim.mean(dim=0).clamp_min(free_bits).sum()


def bow_loss(bow_logits: Tensor, targets: Tensor, mask: Tensor) -> Tensor:
    """Bag-of-words NLL −Σ_t log softmax(bow_logits)[y_t] over content targets, in nats.

    bow_logits (B, V_content), targets (B, T) int64, mask (B, T) bool -> (B,). Only supervised
    positions whose target is a content id (< V_content) count; EOS and PAD ids lie above it.
    """
    n_content = bow_logits.shape[-1]
    content = mask & (targets >= 0) & (targets < n_content)  # (B, T)
    log_probs = F.log_softmax(bow_logits, dim=-1)  # (B, V_content)
    safe_targets = torch.where(content, targets, PLACEHOLDER_TARGET)
    target_log_probs = log_probs.gather(1, safe_targets)  # (B, T)
    return -torch.where(content, target_log_probs, 0.0).sum(dim=1)


@dataclass(frozen=True)
class LossTerms:
    """Every scalar of the CVAE loss, all costs (≥ 0) in nats, logged under these names.

    total = recon + beta·kl_fb + λ_bow·bow + γ·|kl − C|. kl is the raw batch-mean KL summed over
    dimensions, kl_fb its free-bits form (the one in total); bow is the batch-mean BoW NLL (None
    when the run has no BoW head, and then not logged); terms holds each registered term with a
    positive λ, unweighted, logged as recon_<name>; recon is their λ-combination divided by the
    variant's scale R₀ (dimensionless, 1 at the entangled initialization); the penalty
    γ·|kl − C| (the rate target's, docs/method.md#rate-targeted-training) enters total alone.
    Terms a run does not weight are neither computed nor logged.
    """

    total: Tensor
    recon: Tensor
    kl: Tensor
    kl_fb: Tensor
    bow: Tensor | None
    beta: Tensor
    terms: dict[str, Tensor]

    def named(self) -> dict[str, Tensor]:
        """{logged name: scalar tensor}."""
        fixed = ("total", "recon", "kl", "kl_fb", "bow", "beta")
        return {
            **{name: getattr(self, name) for name in fixed if getattr(self, name) is not None},
            **{f"recon_{name}": value for name, value in self.terms.items()},
        }

    def as_floats(self) -> dict[str, float]:
        """{logged name: value}, read back from the device in one transfer."""
        named = self.named()
        values = torch.stack([t.detach().to(torch.float64).reshape(()) for t in named.values()])
        return dict(zip(named, values.tolist(), strict=True))


def reconstruction(terms: Mapping[str, Tensor], weights: Mapping[str, float]) -> Tensor:
    """R = Σ_k λ_k · term_k over the registry's terms, a scalar tensor.

    Names missing from weights count as λ = 0; terms with λ = 0 are skipped (so a non-finite
    unused term cannot poison R). Unknown names raise ValueError.
    """
    unknown = unknown_weights(dict(weights))
    if unknown:
        raise ValueError(f"unknown reconstruction weight(s) {unknown}; expected {list(TERMS)}")
    total = next(iter(terms.values())).new_zeros(())
    for name, value in terms.items():
        weight = weights.get(name, 0.0)
        if weight != 0.0:
            total = total + weight * value
    return total


def reconstruction_scale(
    surprisal: Tensor,
    mask: Tensor,
    *,
    weights: Mapping[str, float],
    normalizer: float,
    eps: float,
    unified: UnifiedParams | None = None,
) -> float:
    """R₀: the variant's reconstruction R with ℓ = b, i.e. its value on the frozen base (the
    decoder's value at the entangled initialization) over the given rows, in float64, > 0.

    surprisal (N, T) nats and mask (N, T) bool are a whole split (the train split in training).
    Dividing R by R₀ makes a variant its weighting's shape: weights k·λ give the same R / R₀,
    so every constant that meets the reconstruction (β, the controller, the penalty, free bits,
    the BoW weight) meets every variant at one scale (docs/method.md#scale-free-control).
    """
    b = surprisal.detach().to(torch.float64)
    batch = TermBatch(b, b, mask, normalizer, eps, unified or UnifiedParams())
    terms = {name: fn(batch) for name, fn in TERMS.items() if weights.get(name, 0.0) > 0}
    scale = float(reconstruction(terms, weights)) if terms else 0.0
    if not (math.isfinite(scale) and scale > 0):
        raise ValueError(
            f"the reconstruction on the frozen base must be finite and > 0, got {scale}"
        )
    return scale


def loss_terms(
    nll: Tensor,
    surprisal: Tensor,
    mask: Tensor,
    *,
    weights: Mapping[str, float],
    normalizer: float,
    eps: float,
    scale: float = 1.0,
    kl_per_dim: Tensor,
    beta: float | Tensor,
    free_bits: float,
    bow: Tensor | None = None,
    bow_weight: float = 0.0,
    unified: UnifiedParams | None = None,
    penalty: float = 0.0,
    target: float = 0.0,
) -> LossTerms:
    """The full loss R / R₀ + β·KL_fb + λ_bow·mean(BoW) + γ·|KL − C| and its parts.

    nll, surprisal (B, T) nats, mask (B, T) bool, kl_per_dim (B, D) nats, bow (B,) nats or None;
    weights are the λ of the registered terms (`zgain.cvae.terms.TERMS`), scale R₀ > 0 the
    variant's reconstruction on the frozen base (`reconstruction_scale`), beta the current β
    (see `zgain.cvae.rate`; a 0-d tensor from the rate target, never read back here), unified
    the settings of the `unified` term; penalty γ and target C the rate target's exact penalty
    on the raw batch KL (docs/method.md#rate-targeted-training), skipped when γ = 0.
    """
    if not isinstance(beta, Tensor) and beta < 0:
        raise ValueError(f"beta must be >= 0, got {beta}")
    if bow_weight < 0:
        raise ValueError(f"bow_weight must be >= 0, got {bow_weight}")
    if penalty < 0:
        raise ValueError(f"penalty must be >= 0, got {penalty}")
    if not scale > 0:
        raise ValueError(f"scale must be > 0, got {scale}")
    if bow is None and bow_weight != 0:
        raise ValueError(f"bow_weight is {bow_weight} but no bow loss was given")
    negative = sorted(name for name, value in weights.items() if value < 0)
    if negative:
        raise ValueError(f"weights must be >= 0, got {negative} < 0")
    batch = TermBatch(nll, surprisal, mask, normalizer, eps, unified or UnifiedParams())
    terms = {name: fn(batch) for name, fn in TERMS.items() if weights.get(name, 0.0) > 0}
    recon = reconstruction(terms, weights) / scale
    kl = kl_per_dim.sum(dim=1).mean()
    kl_fb = free_bits_kl(kl_per_dim, free_bits)
    bow_mean = None if bow is None else bow.mean()
    total = recon + beta * kl_fb
    if bow_mean is not None and bow_weight != 0:
        total = total + bow_weight * bow_mean
    if penalty != 0:
        total = total + penalty * (kl - target).abs()
    beta_value = beta.to(recon) if isinstance(beta, Tensor) else recon.new_tensor(beta)
    return LossTerms(total, recon, kl, kl_fb, bow_mean, beta_value, terms)


def weight_errors(variant: str, weights: Mapping[str, float]) -> list[str]:
    """One params error line per weight name of `variant` that is not a registered term."""
    known = ", ".join(TERMS)
    return [
        f"cvae.variants.{variant}.weights.{name}: unknown weight (known: {known}), got {name!r}"
        for name in unknown_weights(dict(weights))
    ]


@dataclass(frozen=True)
class Objective:
    """Everything the loss needs besides the batch and β: the variant's λ, the normalizer and
    the variant's scale R₀ on the frozen base (`on_split` computes it from the train split).

    β comes from the run's schedule (`schedule()`), which the fit loop owns and updates: the
    objective itself is frozen and keeps no state.
    """

    common: CommonCVAEParams
    variant: ResolvedVariant
    normalizer: float  # N = E[b] over the train split
    rate: float  # target KL C of a rate_target schedule (nats per example)
    scale: float  # R₀: the variant's R on the frozen base over the train split

    def __post_init__(self) -> None:
        lines = weight_errors(self.variant.name, self.variant.weights)
        if lines:
            raise ParamsError(*lines)
        if not self.scale > 0:
            raise ValueError(f"scale must be > 0, got {self.scale}")

    @classmethod
    def on_split(
        cls,
        common: CommonCVAEParams,
        variant: ResolvedVariant,
        normalizer: float,
        rate: float,
        surprisal: Tensor,
        mask: Tensor,
    ) -> Objective:
        """The objective whose scale R₀ is `variant`'s reconstruction on the frozen base over
        the split of `surprisal` (N, T) and `mask` (N, T): the train split in training."""
        lines = weight_errors(variant.name, variant.weights)
        if lines:
            raise ParamsError(*lines)
        scale = reconstruction_scale(
            surprisal,
            mask,
            weights=variant.weights,
            normalizer=normalizer,
            eps=common.eps,
            unified=variant.unified,
        )
        return cls(common, variant, normalizer, rate, scale)

    def schedule(self) -> BetaSchedule:
        """A fresh β schedule for one run of this objective (from the variant's β)."""
        return make_schedule(self.common, self.variant.beta, self.rate)

    def loss(
        self,
        nll: Tensor,
        surprisal: Tensor,
        mask: Tensor,
        kl_per_dim: Tensor,
        beta: float | Tensor,
        bow: Tensor | None,
        penalty: float = 0.0,
    ) -> LossTerms:
        """The variant's loss terms of one batch at the KL weight `beta`, with the rate
        target's exact penalty γ = `penalty` on the distance of the batch KL from this run's C."""
        return loss_terms(
            nll,
            surprisal,
            mask,
            weights=self.variant.weights,
            normalizer=self.normalizer,
            eps=self.common.eps,
            scale=self.scale,
            kl_per_dim=kl_per_dim,
            beta=beta,
            free_bits=self.variant.free_bits,
            bow=bow,
            bow_weight=self.variant.bow_weight,
            unified=self.variant.unified,
            penalty=penalty,
            target=self.rate,
        )
