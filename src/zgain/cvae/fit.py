"""Training one CVAE variant: its objective on an entangled-initialized decoder.

docs/method.md#the-cvae and docs/method.md#the-loss-and-kl-schedules.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import torch
from torch import Tensor
from torch.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn
from tqdm import tqdm

from zgain.core.environment import FiniteWatch, autocast_context
from zgain.core.nll import token_nll
from zgain.core.schedules import lr_at
from zgain.core.sequences import SeqBatch, minibatches, select
from zgain.core.tracking import LogFn
from zgain.cvae.diagnostics import posterior_usage, validation_decomposition
from zgain.cvae.gaussian import kl_divergence, reparameterize
from zgain.cvae.model import CVAE
from zgain.cvae.objective import LossTerms, Objective, bow_loss
from zgain.cvae.rate import BetaSchedule


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


@dataclass
class Member:
    """One run of a group being trained: its model, objective, curves, and the state the fit
    loop owns for it (optimizer, β schedule, latent noise, global RNG, finiteness watch)."""

    model: CVAE
    objective: Objective
    log: LogFn
    seed: int
    device: torch.device
    optimizer: torch.optim.Adam = field(init=False)
    schedule: BetaSchedule = field(init=False)
    noise: torch.Generator = field(init=False)
    rng_state: Tensor = field(init=False)
    watch: FiniteWatch = field(init=False)
    average: AveragedModel | None = field(init=False)
    last: dict[str, float] = field(init=False, default_factory=dict)
    validation: dict[str, float] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        common = self.objective.common
        self.model.to(self.device).train()
        self.optimizer = torch.optim.Adam(
            param_groups(self.model, common.lr, common.decoder_lr), fused=fused_adam(self.device)
        )
        self.schedule = self.objective.schedule()
        self.noise = torch.Generator(device=self.device).manual_seed(self.seed)
        self.rng_state = torch.get_rng_state()
        self.watch = FiniteWatch(self.device)
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


def fit_cvae(
    model: CVAE,
    train: SeqBatch,
    surprisal: Tensor,
    monitor: SeqBatch,
    monitor_base_nll: Tensor,
    objective: Objective,
    *,
    seed: int,
    max_x_len: int,
    device: torch.device,
    log: LogFn,
) -> dict[str, float]:
    """One run alone: `fit_group` with one member; returns its last logged values."""
    (last,) = fit_group(
        [(model, objective, log)],
        train,
        surprisal,
        monitor,
        monitor_base_nll,
        seed=seed,
        max_x_len=max_x_len,
        device=device,
    )
    return last


def fit_group(
    runs: Sequence[tuple[CVAE, Objective, LogFn]],
    train: SeqBatch,
    surprisal: Tensor,
    monitor: SeqBatch,
    monitor_base_nll: Tensor,
    *,
    seed: int,
    max_x_len: int,
    device: torch.device,
) -> list[dict[str, float]]:
    """Adam on each run's loss for `common.steps` steps, the runs in lockstep on shared batches;
    returns each run's last logged values.

    surprisal (N, T) is the frozen base b_t of `train`, row-aligned; monitor is a validation
    batch and monitor_base_nll (N,) its base code lengths B. The runs share one seed and one
    `cvae.common` (one group, docs/architecture.md#runs-and-groups): they draw the same batches,
    and the frozen reader's pass over each batch is computed once for all of them. Each keeps
    its own optimizer, β schedule, latent noise and global RNG stream, so a run trained in a
    group equals the same run trained alone (tests/cvae/test_group.py). Both learning rates
    warm up linearly and decay on a cosine (docs/method.md#the-cvae). Every `val_every` steps
    the validation decomposition is logged (val_marginal_gain, val_z_information, …). A
    non-finite term stops training with `NonFiniteLossError` naming the first such step and
    the term; on CUDA it is read back at log steps only (no host sync per step).
    """
    if not runs:
        raise ValueError("fit_group needs at least one run")
    common = runs[0][1].common
    if any(objective.common != common for _, objective, _ in runs):
        raise ValueError("the runs of a group must share cvae.common")
    members = [Member(model, objective, log, seed, device) for model, objective, log in runs]
    surprisal = surprisal.to(device)
    generator = torch.Generator().manual_seed(seed)
    batches = minibatches(train.targets.shape[0], common.batch_size, generator)
    reader = members[0].model
    # On CPU a read-back is cheap: check every step. On a GPU, every log step.
    check_every = 1 if device.type == "cpu" else common.log_every
    progress = tqdm(range(common.steps), desc="train_cvae", unit="step", mininterval=2.0)
    for step in progress:
        index = next(batches)
        part = select(train, index).to(device)
        part_surprisal = surprisal[index.to(device)]
        with autocast_context(device):
            features = ReaderFeatures.of(reader, part)
        done = step + 1 == common.steps
        for member in members:
            for group in member.optimizer.param_groups:
                group["lr"] = lr_at(
                    step,
                    peak=group["peak_lr"],
                    warmup_steps=common.lr_warmup_steps,
                    total_steps=common.steps,
                    min_ratio=common.min_lr_ratio,
                )
            torch.set_rng_state(member.rng_state)
            aggressive = member.objective.variant.aggressive
            if aggressive is not None and step < aggressive.until:
                for _ in range(aggressive.encoder_steps):
                    member.encoder_step(
                        step, part, part_surprisal, member.schedule.beta(step), max_x_len, features
                    )
            with autocast_context(device):
                terms, kl_per_dim = batch_loss(
                    member.model,
                    part,
                    part_surprisal,
                    member.objective,
                    member.schedule.beta(step),
                    max_x_len=max_x_len,
                    generator=member.noise,
                    features=features,
                    penalty=member.schedule.penalty(step),
                )
            named = terms.named()
            member.watch.observe(step, named)
            if (step + 1) % check_every == 0 or done:
                member.watch.check()
            member.schedule.observe(step, terms.kl)
            member.optimizer.zero_grad(set_to_none=True)
            terms.total.backward()
            member.step()
            if (step + 1) % common.val_every == 0 or done:
                member.validation = validation_decomposition(
                    member.evaluated,
                    monitor,
                    monitor_base_nll,
                    n_samples=common.val_iw_samples,
                    max_x_len=max_x_len,
                    device=device,
                    seed=seed,
                )
            if (step + 1) % common.log_every == 0 or done:
                member.watch.check()
                kl_dims = kl_per_dim.detach().mean(dim=0).tolist()
                member.last = {
                    **terms.as_floats(),
                    **{f"kl_dim_{j}": v for j, v in enumerate(kl_dims)},
                    **posterior_usage(member.evaluated, monitor, device),
                    **member.validation,
                    **member.schedule.state(),
                    "lr": member.optimizer.param_groups[0]["lr"],
                }
                member.log(step + 1, member.last)
            member.rng_state = torch.get_rng_state()
    for member in members:
        member.finish()
    return [member.last for member in members]
