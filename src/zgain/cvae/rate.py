"""β schedules as controllers: fixed schedules, and dual ascent on log β toward a target rate.

docs/method.md#rate-targeted-training. A schedule answers `beta(step)` before a step and is told
the batch's KL after it (`observe`); only the rate target uses what it is told. The rate target
keeps its multiplier as 0-d float64 tensors on the batch's device, so on a GPU it updates
without reading anything back to the host; `state()` is the one read-back, at log steps. A
schedule is the fit loop's state (one per run), never part of the frozen objective.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Protocol

import torch
from torch import Tensor

from zgain.params import BetaScheduleName, CommonCVAEParams, RateTargetParams

FIXED_SCHEDULES: tuple[str, ...] = ("constant", "linear", "cyclical")


class BetaSchedule(Protocol):
    def beta(self, step: int) -> float | Tensor: ...

    def observe(self, step: int, kl: Tensor | float) -> None: ...

    def penalty(self, step: int) -> float: ...

    def state(self) -> dict[str, float]: ...


def beta_at(
    step: int,
    *,
    schedule: BetaScheduleName,
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
    if schedule not in FIXED_SCHEDULES:
        raise ValueError(f"schedule must be one of {FIXED_SCHEDULES}, got {schedule!r}")
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


def warmup_factor(step: int, warmup_steps: int) -> float:
    """min(1, step / warmup_steps), 1 without warm-up."""
    return 1.0 if warmup_steps == 0 else min(1.0, step / warmup_steps)


LOG_RATIO_FLOOR = 1e-3
"""Under rule `log_ratio`, KL_ema is read as at least this fraction of the target: a zero rate
lowers log β by eta·log(1000) ≈ 6.9·eta per step instead of an infinite step."""


@dataclass
class RateTarget:
    """β as a Lagrange multiplier for E_batch KL = target, adapted by dual ascent on log β.

    During the warm-up β ramps linearly from 0 to its initial value and the multiplier is not
    updated (the KL of a half-weighted β says nothing about the equilibrium). From then on, each
    observed batch KL updates KL_ema ← ema·KL_ema + (1 − ema)·KL (KL_ema starts at the first
    observation) and log β ← clamp(log β + eta·excess, log β_min, log β_max), the excess being
    KL_ema − target (rule `difference`) or log(max(KL_ema, LOG_RATIO_FLOOR·target) / target)
    (rule `log_ratio`). From `penalty_step` on, `penalty(step)` gives the loss its exact
    penalty γ·|KL_batch − C| (docs/method.md#rate-targeted-training).
    log β and KL_ema are 0-d float64 tensors that move to the device of the first observed KL.
    """

    target: float  # C, nats per example
    beta_init: float
    settings: RateTargetParams
    warmup_steps: int
    penalty_step: int = 0  # the first step of the exact penalty
    log_beta: Tensor = field(init=False)
    kl_ema: Tensor = field(init=False)
    observed: bool = field(init=False, default=False)

    def __post_init__(self) -> None:
        if self.target <= 0:
            raise ValueError(f"target rate must be > 0, got {self.target}")
        s = self.settings
        if not s.beta_min <= self.beta_init <= s.beta_max:
            raise ValueError(
                f"initial beta must lie in [beta_min, beta_max] = [{s.beta_min}, {s.beta_max}], "
                f"got {self.beta_init}"
            )
        self.log_beta = torch.tensor(math.log(self.beta_init), dtype=torch.float64)
        self.kl_ema = torch.tensor(math.nan, dtype=torch.float64)

    def beta(self, step: int) -> Tensor:
        return warmup_factor(step, self.warmup_steps) * torch.exp(self.log_beta)

    def observe(self, step: int, kl: Tensor | float) -> None:
        kl = torch.as_tensor(kl).detach().to(torch.float64).reshape(())
        ema = self.settings.ema
        if not self.observed:
            self.kl_ema = kl.clone()
            self.log_beta = self.log_beta.to(kl.device)
            self.observed = True
        else:
            self.kl_ema = ema * self.kl_ema + (1 - ema) * kl
        if step < self.warmup_steps:
            return
        s = self.settings
        stepped = self.log_beta + s.eta * self.excess()
        self.log_beta = stepped.clamp(math.log(s.beta_min), math.log(s.beta_max))

    def penalty(self, step: int) -> float:
        """γ of the exact penalty γ·|KL_batch − C| at this step: `settings.penalty` from
        `penalty_step` on, 0 before."""
        return self.settings.penalty if step >= self.penalty_step else 0.0

    def excess(self) -> Tensor:
        """How far KL_ema is above the target, in the unit of the rule (nats or log-ratio)."""
        if self.settings.rule == "difference":
            return self.kl_ema - self.target
        return torch.log(self.kl_ema.clamp_min(LOG_RATIO_FLOOR * self.target) / self.target)

    def state(self) -> dict[str, float]:
        return {"kl_target": self.target, "kl_ema": float(self.kl_ema)}


@dataclass
class FixedSchedule:
    """constant, linear or cyclical β: a pure function of the step (`beta_at`)."""

    common: CommonCVAEParams
    beta_value: float

    def beta(self, step: int) -> float:
        c = self.common
        return beta_at(
            step,
            schedule=c.beta_schedule,
            beta=self.beta_value,
            warmup_steps=c.warmup_steps,
            n_cycles=c.n_cycles,
            ramp_fraction=c.ramp_fraction,
            total_steps=c.steps,
        )

    def observe(self, step: int, kl: Tensor | float) -> None:
        return None

    def penalty(self, step: int) -> float:
        return 0.0

    def state(self) -> dict[str, float]:
        return {}


def make_schedule(common: CommonCVAEParams, beta: float, rate: float) -> BetaSchedule:
    """The schedule `common.beta_schedule` names, starting from (or fixed at) `beta`; `rate` is
    the target C of a rate_target schedule and is ignored by the fixed ones."""
    if common.beta_schedule == "rate_target":
        settings = common.rate_target
        penalty_step = round(settings.penalty_from * common.steps)
        return RateTarget(rate, beta, settings, settings.warmup_steps, penalty_step)
    return FixedSchedule(common, beta)
