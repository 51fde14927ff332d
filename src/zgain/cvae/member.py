"""One run of a group while it trains: its loss on a batch, its optimizer and β schedule, its
curves (docs/method.md#the-cvae and docs/method.md#the-loss-and-kl-schedules). `zgain.cvae.fit`
steps runs; this module holds what each one owns.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
from torch import Tensor
from torch.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn

from zgain.core.environment import FiniteWatch, autocast_context
from zgain.core.nll import token_nll
from zgain.core.schedules import lr_at
from zgain.core.sequences import SeqBatch
from zgain.core.tracking import LogFn
from zgain.cvae.diagnostics import posterior_usage, validation_decomposition
from zgain.cvae.gaussian import kl_divergence, reparameterize
from zgain.cvae.model import CVAE
from zgain.cvae.objective import LossTerms, Objective, bow_loss
from zgain.cvae.rate import BetaSchedule
from zgain.params import CommonCVAEParams


@dataclass(frozen=True)
class ReaderFeatures:
    """The frozen base reader's hidden states of one batch's encoder and prior inputs, computed
    once and read by every run that trains on that batch (None without `encoders_read_base`)."""

    posterior: Tensor | None
    prior: Tensor | None

    @classmethod
    def of(cls, model: CVAE, part: SeqBatch) -> ReaderFeatures:
        """One reader pass over the encoder input. The prior input [x, SEP] is its prefix and
        the base is causal (attention and segment positions look only left), so the prior's
        features are the first X+1 of the same states (equal to a separate pass up to float
        rounding: tests/cvae/test_fit.py)."""
        posterior = model.base_features(part.encoder_input)
        if posterior is None:
            return cls(None, None)
        return cls(posterior, posterior[:, : part.prior_input.shape[1]])


def batch_loss(
    model: CVAE,
    part: SeqBatch,
    surprisal: Tensor,
    objective: Objective,
    beta: float | Tensor,
    *,
    max_x_len: int,
    generator: torch.Generator | None,
    features: ReaderFeatures | None = None,
    penalty: float = 0.0,
) -> tuple[LossTerms, Tensor]:
    """The loss terms of one batch with z ~ q(z|x,y); also returns the KL per dimension (B, D).

    features: the reader's pass over `part` when the caller shares it between runs; penalty:
    the rate target's γ at this step (`BetaSchedule.penalty`).
    """
    features = features or ReaderFeatures.of(model, part)
    mu_q, logvar_q = model.posterior(part.encoder_input, features.posterior)
    mu_p, logvar_p = model.prior(part.prior_input, features.prior)
    z = reparameterize(mu_q, logvar_q, generator)
    logits = model.decode(part.decoder_input, z, first=max_x_len)  # (B, T, V)
    nll = token_nll(logits.float(), part.targets, part.mask)  # (B, T)
    kl_per_dim = kl_divergence(
        mu_q.float(), logvar_q.float(), mu_p.float(), logvar_p.float()
    )  # (B, D)
    bow = (
        bow_loss(model.bow_logits(z).float(), part.targets, part.mask)
        if objective.variant.bow_weight > 0
        else None
    )
    terms = objective.loss(nll, surprisal, part.mask, kl_per_dim, beta, bow, penalty)
    return terms, kl_per_dim


def param_groups(model: CVAE, lr: float, decoder_lr: float) -> list[dict]:
    """Adam groups: the decoder copy at decoder_lr, everything else (encoders, z-injection, BoW
    head) at lr; frozen parameters are left out, and so is a group with nothing to train."""
    decoder = [p for p in model.decoder.parameters() if p.requires_grad]
    others = [
        p
        for name, p in model.named_parameters()
        if p.requires_grad and not name.startswith("decoder.")
    ]
    groups = [
        {"params": others, "lr": lr, "peak_lr": lr},
        {"params": decoder, "lr": decoder_lr, "peak_lr": decoder_lr},
    ]
    return [group for group in groups if group["params"]]


FUSED_ADAM_DEVICES = ("cpu", "cuda")
"""Devices on which Adam takes its fused kernel: one call per parameter group and step instead
of about ten per parameter tensor (docs/performance.md#the-optimizer-step)."""


def fused_adam(device: torch.device) -> bool:
    """Whether Adam on `device` uses its fused kernel (the same update, fewer calls)."""
    return device.type in FUSED_ADAM_DEVICES


@dataclass(frozen=True)
class Monitor:
    """What the fit loop validates on: a validation batch, its base code lengths B (N,), the
    importance samples per example, the frames, the device and the latent noise's seed."""

    batch: SeqBatch
    base_nll: Tensor
    n_samples: int
    max_x_len: int
    device: torch.device
    seed: int


@dataclass
class RunState:
    """One run of a group, whichever engine trains it: its model, objective, curves, and the
    state the fit loop owns for it (β schedule, latent noise, global RNG, finiteness watch)."""

    model: CVAE
    objective: Objective
    log: LogFn
    seed: int
    device: torch.device
    schedule: BetaSchedule = field(init=False)
    noise: torch.Generator = field(init=False)
    rng_state: Tensor = field(init=False)
    watch: FiniteWatch = field(init=False)
    last: dict[str, float] = field(init=False, default_factory=dict)
    validation: dict[str, float] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        self.model.to(self.device).train()
        self.schedule = self.objective.schedule()
        self.noise = torch.Generator(device=self.device).manual_seed(self.seed)
        self.rng_state = torch.get_rng_state()
        self.watch = FiniteWatch(self.device)

    def loss(
        self, step: int, nll: Tensor, part: SeqBatch, surprisal: Tensor, kl: Tensor, bow: Tensor
    ) -> LossTerms:
        """This run's loss terms at `step` from its model's outputs on the batch `part`."""
        bow_nll = (
            bow_loss(bow, part.targets, part.mask)
            if self.objective.variant.bow_weight > 0
            else None
        )
        beta, penalty = self.schedule.beta(step), self.schedule.penalty(step)
        return self.objective.loss(nll, surprisal, part.mask, kl, beta, bow_nll, penalty)

    def account(self, step: int, terms: LossTerms, check: bool) -> None:
        """Watch the terms for a non-finite value (read back when `check`), tell the β
        schedule the batch KL."""
        self.watch.observe(step, terms.named())
        if check:
            self.watch.check()
        self.schedule.observe(step, terms.kl)

    def record(
        self,
        step: int,
        terms: LossTerms,
        kl_per_dim: Tensor,
        evaluated: CVAE,
        lr: float,
        monitor: Monitor,
        *,
        validate: bool,
        log: bool,
    ) -> None:
        """The validation decomposition of the `evaluated` weights when `validate`; this step's
        values logged when `log`."""
        if validate:
            self.validation = validation_decomposition(
                evaluated,
                monitor.batch,
                monitor.base_nll,
                n_samples=monitor.n_samples,
                max_x_len=monitor.max_x_len,
                device=monitor.device,
                seed=monitor.seed,
            )
        if not log:
            return
        self.watch.check()
        kl_dims = kl_per_dim.detach().mean(dim=0).tolist()
        self.last = {
            **terms.as_floats(),
            **{f"kl_dim_{j}": v for j, v in enumerate(kl_dims)},
            **posterior_usage(evaluated, monitor.batch, monitor.device),
            **self.validation,
            **self.schedule.state(),
            "lr": lr,
        }
        self.log(step + 1, self.last)


@dataclass
class Member(RunState):
    """A run trained on its own model and optimizer (the lockstep engine)."""

    optimizer: torch.optim.Adam = field(init=False)
    average: AveragedModel | None = field(init=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        common = self.objective.common
        self.optimizer = torch.optim.Adam(
            param_groups(self.model, common.lr, common.decoder_lr), fused=fused_adam(self.device)
        )
        decay = common.weight_average
        self.average = (
            AveragedModel(self.model, multi_avg_fn=get_ema_multi_avg_fn(decay)) if decay else None
        )

    @property
    def evaluated(self) -> CVAE:
        """The weights that are validated and saved: the moving average, or the last iterate."""
        return self.model if self.average is None else self.average.module

    def step(self) -> None:
        """One optimizer step, then the moving average's update."""
        self.optimizer.step()
        if self.average is not None:
            self.average.update_parameters(self.model)

    def encoder_step(
        self,
        step: int,
        part: SeqBatch,
        surprisal: Tensor,
        beta: float | Tensor,
        max_x_len: int,
        features: ReaderFeatures,
    ) -> None:
        """One update of q(z|x,y) alone on the full loss (aggressive encoder training, He et
        al. 2019: docs/method.md#remedies); every other parameter keeps its value and its Adam
        moments (a parameter without a gradient is skipped by Adam)."""
        with autocast_context(self.device):
            terms, _ = batch_loss(
                self.model,
                part,
                surprisal,
                self.objective,
                beta,
                max_x_len=max_x_len,
                generator=self.noise,
                features=features,
                penalty=self.schedule.penalty(step),
            )
        self.watch.observe(step, terms.named())
        self.optimizer.zero_grad(set_to_none=True)
        terms.total.backward()
        encoder = {id(p) for p in self.model.posterior_encoder.parameters()}
        for group in self.optimizer.param_groups:
            for param in group["params"]:
                if id(param) not in encoder:
                    param.grad = None
        self.optimizer.step()

    def finish(self) -> None:
        """Leave the saved weights in `model` (the average, when there is one), in eval mode."""
        if self.average is not None:
            self.model.load_state_dict(self.average.module.state_dict())
            self.average = None
        self.model.eval()


def set_lr(optimizer: torch.optim.Optimizer, step: int, common: CommonCVAEParams) -> float:
    """Each group's learning rate at `step` (linear warm-up, cosine decay); returns the first
    group's."""
    for group in optimizer.param_groups:
        group["lr"] = lr_at(
            step,
            peak=group["peak_lr"],
            warmup_steps=common.lr_warmup_steps,
            total_steps=common.steps,
            min_ratio=common.min_lr_ratio,
        )
    return optimizer.param_groups[0]["lr"]
