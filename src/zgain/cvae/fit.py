"""Training the runs of a group: each variant's objective on an entangled-initialized decoder,
the runs in lockstep on shared batches, or stacked as one model with a member axis.

docs/method.md#the-cvae and docs/method.md#the-loss-and-kl-schedules.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor
from tqdm import tqdm

from zgain.core.environment import ENGINE_ENV, ENGINES, Engine, autocast_context
from zgain.core.errors import ParamsError
from zgain.core.sequences import SeqBatch, minibatches, select
from zgain.core.tracking import LogFn
from zgain.cvae.member import (
    Member,
    Monitor,
    ReaderFeatures,
    RunState,
    batch_loss,
    fused_adam,
    set_lr,
)
from zgain.cvae.model import CVAE
from zgain.cvae.objective import Objective
from zgain.cvae.stack import Stack
from zgain.cvae.stack import refusal as stack_refusal


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
    engine: Engine = "lockstep",
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
        engine=engine,
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
    engine: Engine = "lockstep",
) -> list[dict[str, float]]:
    """Adam on each run's loss for `common.steps` steps, the runs in lockstep on shared batches;
    returns each run's last logged values.

    surprisal (N, T) is the frozen base b_t of `train`, row-aligned; monitor is a validation
    batch and monitor_base_nll (N,) its base code lengths B. The runs share one seed and one
    `cvae.common` (one group, docs/architecture.md#runs-and-groups): they draw the same batches,
    and the frozen reader's pass over each batch is computed once for all of them. Each keeps
    its own initialization, latent noise, β schedule and loss. `engine` "lockstep" steps each
    run's own model and optimizer in turn, so a run trained in a group equals the same run
    trained alone (tests/cvae/test_group.py); "stacked" trains them as one model with a member
    axis (`zgain.cvae.stack`), equal to the solo runs up to float rounding
    (tests/cvae/test_stack.py); "compiled" is "stacked" with the stack's forward under
    `torch.compile`. Both learning rates warm up linearly and decay on a cosine
    (docs/method.md#the-cvae). Every `val_every` steps the validation decomposition is logged
    (val_marginal_gain, val_z_information, …). A non-finite term stops training with
    `NonFiniteLossError` naming the first such step and the term; on CUDA it is read back at
    log steps only (no host sync per step).
    """
    if not runs:
        raise ValueError("fit_group needs at least one run")
    common = runs[0][1].common
    if any(objective.common != common for _, objective, _ in runs):
        raise ValueError("the runs of a group must share cvae.common")
    watch = Monitor(monitor, monitor_base_nll, common.val_iw_samples, max_x_len, device, seed)
    if engine in ("stacked", "compiled"):
        models = [model for model, _, _ in runs]
        why = stack_refusal(models, [o.variant.aggressive is not None for _, o, _ in runs])
        if why is not None:
            raise ParamsError(f"{ENGINE_ENV}={engine}: cannot stack this group: {why}")
        states = [RunState(model, objective, log, seed, device) for model, objective, log in runs]
        stack = Stack(
            models,
            common.lr,
            common.decoder_lr,
            common.weight_average,
            fused_adam(device),
            compiled=engine == "compiled",
        )
        members: list[Member] = []
    elif engine == "lockstep":
        members = [Member(model, objective, log, seed, device) for model, objective, log in runs]
        states, stack = list(members), None
    else:
        raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}")
    # the split and its surprisal go to the device once; each step sends its index only, without
    # waiting for the copy (a blocking host-to-device copy synchronizes on CUDA)
    train, surprisal = train.to(device), surprisal.to(device)
    generator = torch.Generator().manual_seed(seed)
    batches = minibatches(train.targets.shape[0], common.batch_size, generator)
    reader = runs[0][0]
    # On CPU a read-back is cheap: check every step. On a GPU, every log step.
    check_every = 1 if device.type == "cpu" else common.log_every
    progress = tqdm(range(common.steps), desc="train_cvae", unit="step", mininterval=2.0)
    for step in progress:
        index = next(batches).to(device, non_blocking=True)
        part = select(train, index)
        part_surprisal = surprisal[index]
        with autocast_context(device):
            features = ReaderFeatures.of(reader, part)
        done = step + 1 == common.steps
        when = {
            "check": (step + 1) % check_every == 0 or done,
            "validate": (step + 1) % common.val_every == 0 or done,
            "log": (step + 1) % common.log_every == 0 or done,
        }
        if stack is None:
            for member in members:
                lockstep_step(member, step, part, part_surprisal, features, watch, when)
        else:
            lr = set_lr(stack.optimizer, step, common)
            stack.train_step(states, step, part, part_surprisal, features, watch, when, lr)
    for index, state in enumerate(states):
        if stack is not None:
            stack.load_member(index, state.model, averaged=True)
            state.model.eval()
    for member in members:
        member.finish()
    return [state.last for state in states]


def lockstep_step(
    member: Member,
    step: int,
    part: SeqBatch,
    surprisal: Tensor,
    features: ReaderFeatures,
    monitor: Monitor,
    when: dict[str, bool],
) -> None:
    """One step of one run on its own model and optimizer."""
    common = member.objective.common
    lr = set_lr(member.optimizer, step, common)
    torch.set_rng_state(member.rng_state)
    aggressive = member.objective.variant.aggressive
    if aggressive is not None and step < aggressive.until:
        for _ in range(aggressive.encoder_steps):
            member.encoder_step(
                step, part, surprisal, member.schedule.beta(step), monitor.max_x_len, features
            )
    with autocast_context(member.device):
        terms, kl_per_dim = batch_loss(
            member.model,
            part,
            surprisal,
            member.objective,
            member.schedule.beta(step),
            max_x_len=monitor.max_x_len,
            generator=member.noise,
            features=features,
            penalty=member.schedule.penalty(step),
        )
    member.account(step, terms, when["check"])
    member.optimizer.zero_grad(set_to_none=True)
    terms.total.backward()
    member.step()
    member.record(
        step,
        terms,
        kl_per_dim,
        member.evaluated,
        lr,
        monitor,
        validate=when["validate"],
        log=when["log"],
    )
    member.rng_state = torch.get_rng_state()
