"""The registry of reconstruction terms (docs/method.md#reconstruction-terms).

One entry per term: name (the key a variant weights in `params.yaml`) -> function -> docstring
whose first line is the formula. `TERMS` feeds the loss (`zgain.cvae.objective`), the check of
variant weight names and the term table of the docs. Adding a term is one `@term` function here
and its test.

Every function takes one `TermBatch` and returns a scalar batch mean. Notation: ℓ_{i,t} the
decoder's token NLL (carries gradient), b_{i,t} the frozen base surprisal (no gradient),
T_i supervised positions, B_i = Σ_t b_t, b_i = B_i / T_i, L_i = Σ_t ℓ_t, ℓ̄_i = L_i / T_i,
N the train-split mean of b_i, ε a guard in nats.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property

import torch
from torch import Tensor

from zgain.core.nll import masked_mean, masked_sum
from zgain.params import UnifiedParams

INVERSE_ALPHA = -1.0
"""Exponent α of the token weights (b_t + ε)^α that gives the `inv` term's weights."""


def power_weights(surprisal: Tensor, mask: Tensor, *, alpha: float, eps: float) -> Tensor:
    """Token weights ∝ (b_t + ε)^α, summing to 1 over each example's supervised positions.

    surprisal (B, T) nats, mask (B, T) bool -> (B, T) dimensionless, 0 where masked, no gradient.
    α = 0 is uniform (1/T_i), α = −1 is the `inv` term's v, α = 1 is `tok`'s w up to O(ε).
    """
    b = torch.where(mask, surprisal.detach(), 0.0)
    raw = torch.where(mask, (b + eps).pow(alpha), 0.0)
    return raw / raw.sum(dim=1, keepdim=True)


def token_share_weights(surprisal: Tensor, mask: Tensor, eps: float) -> Tensor:
    """Surprisal shares w_t = b_t / (B_i + ε): (B, T) nats, (B, T) bool -> (B, T), no grad."""
    b = torch.where(mask, surprisal.detach(), 0.0)
    return b / (b.sum(dim=1, keepdim=True) + eps)


def inverse_surprisal_weights(surprisal: Tensor, mask: Tensor, eps: float) -> Tensor:
    """v_t = (b_t+ε)^−1 / Σ_s (b_s+ε)^−1: (B, T), (B, T) bool -> (B, T), no grad."""
    return power_weights(surprisal, mask, alpha=INVERSE_ALPHA, eps=eps)


def concentration(weights: Tensor, mask: Tensor) -> Tensor:
    """Concentration Σ_t w_t² of normalised token weights: (B, T), (B, T) bool -> (B,).

    1/T_i for uniform weights, 1 when one token holds all the weight.
    """
    return masked_sum(weights.detach().square(), mask)


def concentration_correction(
    weights: Tensor, surprisal: Tensor, mask: Tensor, eps: float
) -> Tensor:
    """Example weight c_i = b_i / (Σ_t w_t b_t + ε), dimensionless, no gradient.

    weights (B, T) summing to 1 per example, surprisal (B, T) nats, mask (B, T) bool -> (B,).
    For the share weights w of `tok`, c_i = 1 / (T_i Σ_t w_t²) up to ε.
    """
    b = surprisal.detach()
    weighted_surprisal = masked_sum(weights.detach() * b, mask)
    return masked_mean(b, mask) / (weighted_surprisal + eps)


def check_batch(
    nll: Tensor, surprisal: Tensor, mask: Tensor, normalizer: float, eps: float
) -> None:
    """ValueError naming the problem unless the inputs form one well-posed batch."""
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
    # Read back on the CPU only: on an accelerator the answer would stall every training step,
    # and training's rows were all checked on the CPU when the split's scale R₀ was computed
    # (Objective.on_split reads the whole split through this function).
    if mask.device.type == "cpu" and not bool(mask.any(dim=1).all()):
        raise ValueError("mask: every example needs at least one supervised position")


@dataclass(frozen=True)
class TermBatch:
    """One batch as every term reads it; shared per-example quantities are computed once.

    nll ℓ (B, T) nats from the decoder, surprisal b (B, T) nats from the frozen base (detached
    here), mask (B, T) bool of supervised positions (ragged: T_i = mask.sum(1)); masked
    positions contribute nothing, whatever they hold.
    """

    nll: Tensor
    surprisal: Tensor
    mask: Tensor
    normalizer: float  # N, nats per token
    eps: float  # ε, nats
    unified: UnifiedParams = UnifiedParams()  # settings of the `unified` term

    def __post_init__(self) -> None:
        check_batch(self.nll, self.surprisal, self.mask, self.normalizer, self.eps)

    @cached_property
    def ell(self) -> Tensor:
        """ℓ (B, T); where, not a product, so NaN garbage off the mask cannot leak."""
        return torch.where(self.mask, self.nll, 0.0)

    @cached_property
    def seq_nll(self) -> Tensor:
        """L_i (B,)."""
        return self.ell.sum(dim=1)

    @cached_property
    def mean_nll(self) -> Tensor:
        """ℓ̄_i (B,)."""
        return self.seq_nll / self.mask.sum(dim=1).to(self.ell.dtype)

    @cached_property
    def surprisal_mean(self) -> Tensor:
        """b_i (B,), no gradient."""
        return masked_mean(self.surprisal.detach(), self.mask)

    @cached_property
    def share(self) -> Tensor:
        """w (B, T)."""
        return token_share_weights(self.surprisal, self.mask, self.eps)

    @cached_property
    def inverse(self) -> Tensor:
        """v (B, T)."""
        return inverse_surprisal_weights(self.surprisal, self.mask, self.eps)


TermFn = Callable[[TermBatch], Tensor]
TERMS: dict[str, TermFn] = {}
"""name -> term, in table order; the names are the keys of `cvae.variants.<v>.weights`."""


@dataclass(frozen=True)
class Position:
    """Where a named term sits in the unified family (docs/method.md#unified): its (α, γ) and
    what else it sets. At equal rate the scale η does not matter: the controller absorbs it."""

    alpha: float
    gamma: float
    note: str = ""


POSITIONS: dict[str, Position] = {}
"""name -> its place in the unified family, for every term but `unified` itself."""


def term(name: str, position: Position | None = None) -> Callable[[TermFn], TermFn]:
    """Register a term under `name`; its docstring's first line must state the formula."""

    def register(fn: TermFn) -> TermFn:
        if name in TERMS:
            raise ValueError(f"reconstruction term {name!r} is registered twice")
        if not (fn.__doc__ or "").strip():
            raise ValueError(f"reconstruction term {name!r} needs a docstring with its formula")
        TERMS[name] = fn
        if position is not None:
            POSITIONS[name] = position
        return fn

    return register


def terms_used(weights: Mapping[str, float]) -> frozenset[str]:
    """The terms a variant's weights use: those with a positive weight."""
    return frozenset(name for name, weight in weights.items() if weight > 0)


def formula(name: str) -> str:
    """The first docstring line of the term `name`: its formula."""
    return (TERMS[name].__doc__ or "").strip().splitlines()[0]


@term("mean", Position(0.0, 0.0))
def token_mean(batch: TermBatch) -> Tensor:
    """R_mean = mean_i ℓ̄_i (plain token-mean)."""
    return batch.mean_nll.mean()


@term("sum", Position(0.0, 0.0, "token-sum"))
def token_sum(batch: TermBatch) -> Tensor:
    """R_sum = mean_i Σ_t ℓ_t (token-sum: the sequence NLL)."""
    return batch.seq_nll.mean()


@term("dist", Position(0.0, 0.0, "η = 1"))
def dist_normalized(batch: TermBatch) -> Tensor:
    """R_dist = mean_i ℓ̄_i / N (one global constant: a ratio of means)."""
    return batch.mean_nll.mean() / batch.normalizer


@term("ex", Position(0.0, 1.0))
def example_inverse(batch: TermBatch) -> Tensor:
    """R_ex = mean_i ℓ̄_i / (b_i + ε) (example-level inverse surprisal: a mean of ratios)."""
    return (batch.mean_nll / (batch.surprisal_mean + batch.eps)).mean()


@term("tok", Position(1.0, 0.0))
def token_share(batch: TermBatch) -> Tensor:
    """R_tok = mean_i Σ_t w_t ℓ_t with w_t = b_t / (B_i + ε) (token surprisal shares)."""
    return (batch.share * batch.ell).sum(dim=1).mean()


@term("cc", Position(1.0, 0.0, "concentration, η = 1"))
def token_share_cc(batch: TermBatch) -> Tensor:
    """R_cc = mean_i c_i Σ_t w_t ℓ_t / N with c_i = b_i / (Σ_t w_t b_t + ε)."""
    share_nll = (batch.share * batch.ell).sum(dim=1)
    correction = concentration_correction(batch.share, batch.surprisal, batch.mask, batch.eps)
    return (correction * share_nll).mean() / batch.normalizer


@term("inv", Position(-1.0, 0.0, "concentration, η = 1"))
def token_inverse_cc(batch: TermBatch) -> Tensor:
    """R_inv = mean_i c'_i Σ_t v_t ℓ_t / N, v_t ∝ (b_t + ε)^−1, c'_i = b_i / (Σ_t v_t b_t + ε)."""
    inverse_nll = (batch.inverse * batch.ell).sum(dim=1)
    correction = concentration_correction(batch.inverse, batch.surprisal, batch.mask, batch.eps)
    return (correction * inverse_nll).mean() / batch.normalizer


@term("unified")
def unified(batch: TermBatch) -> Tensor:
    """R_uni = N^−η · mean_i (b_i+ε)^−γ · [T_i] · [c_i] · Σ_t w_t ℓ_t, w_t ∝ (b_t+ε)^α.

    The settings are the variant's `unified` block: c_i = b_i / (Σ_t w_t b_t + ε) when
    `concentration`, the factor T_i only when `token_sum`. The other terms are the settings
    (others False / 0): mean α=0; sum α=0, token_sum; dist α=0, η=1; ex α=0, γ=1; tok α=1;
    cc α=1, concentration, η=1; inv α=−1, concentration, η=1. With α=1 the weights are
    (b_t+ε)/(B_i+T_i ε), which match `tok`'s b_t/(B_i+ε) only up to O(ε), so tok and cc are
    reproduced up to O(ε); the others to rounding.
    """
    settings = batch.unified
    weights = power_weights(batch.surprisal, batch.mask, alpha=settings.alpha, eps=batch.eps)
    per_example = (weights * batch.ell).sum(dim=1)  # weighted token-mean, (B,)
    if settings.concentration:
        per_example = per_example * concentration_correction(
            weights, batch.surprisal, batch.mask, batch.eps
        )
    if settings.token_sum:
        per_example = per_example * batch.mask.sum(dim=1).to(batch.ell.dtype)
    example_weight = (batch.surprisal_mean + batch.eps).pow(-settings.gamma)  # (B,)
    return (example_weight * per_example).mean() * batch.normalizer ** (-settings.eta)


def unknown_weights(weights: dict[str, float]) -> list[str]:
    """The names in `weights` that are not registered terms."""
    return [name for name in weights if name not in TERMS]
