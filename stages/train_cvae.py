"""Stages `train_cvae@<base>-<variant>-<seed>` (one variant, one seed, every target rate, on the
screening base) and `confirm_train_cvae@<base>-<seed>` (every contested variant at the headline
rates, one replicate).

The group's runs train side by side over the CPU cores (a forked process per share) or in
lockstep on one accelerator; each run writes its own checkpoint and curves
(docs/architecture.md#runs-and-groups).
"""

from __future__ import annotations

from pathlib import Path

import torch

from zgain.base.frozen import load_frozen_splits
from zgain.base.model import load_base
from zgain.core.cli import run_stage
from zgain.core.environment import resolve_engine, setup_torch
from zgain.core.group_stage import group_main, run_group
from zgain.core.runs import KL_TARGET_KEY, Group, Run
from zgain.core.sequences import select
from zgain.core.tracking import live_runs
from zgain.cvae.fit import fit_group
from zgain.cvae.model import CVAE, save_cvae
from zgain.cvae.objective import Objective
from zgain.params import Params
from zgain.world.packed import frames_of, load_packed


def run(
    params: Params,
    group: Group,
    *,
    device: str | None = None,
    threads: int | None = None,
    rates: list[float] | None = None,
) -> list[dict[str, float]]:
    """Train the runs of `group` at `rates` (default: every rate of its tier) side by side
    (zgain.core.group_stage.run_group); each run's last logged values, in the group's run
    order."""
    return run_group(
        params, group, train_runs, outputs, device=device, threads=threads, rates=rates
    )


main = group_main(run)


def train_runs(
    params: Params, runs: list[Run], threads: int, *, device: str | None
) -> list[dict[str, float]]:
    """Train `runs` (one group: one base and seed) in lockstep in this process; returns their
    last logged values. Each run's model is initialized from its seed alone, as if trained
    alone."""
    seed = runs[0].seed
    base_paths = params.paths.base(runs[0].base)
    frames = frames_of(params)
    common = params.cvae.tier_common(runs[0].confirming)
    torch_device, environment = setup_torch(seed, device=device, threads=threads)
    engine = resolve_engine(torch_device)  # how the runs train: docs/performance.md#the-member-axis
    train_split, train = load_packed(params.paths.synthetic_dir, "train", frames)
    val_split, val = load_packed(params.paths.synthetic_dir, "val", frames)
    train_frozen, val_frozen = load_frozen_splits(
        base_paths, [train_split, val_split], frames.n_targets
    )
    base = load_base(base_paths.base_model)
    train_surprisal = torch.from_numpy(train_frozen.surprisal)
    objectives = [
        Objective.on_split(
            common,
            params.cvae.variant(run.variant),
            train_frozen.normalizer.mean_surprisal,
            run.rate,
            train_surprisal,
            train.mask,
        )
        for run in runs
    ]
    models = []
    for objective in objectives:
        torch.manual_seed(seed)  # every run's initialization is the one it gets alone
        models.append(CVAE(base, objective.variant.model))
    monitor_rows = slice(0, common.val_examples)
    monitor = select(val, monitor_rows)
    monitor_base = torch.from_numpy(val_frozen.sequence_surprisal[monitor_rows])
    with live_runs([run.live_dir(params.paths.cvae_live) for run in runs]) as (lives, logs):
        lasts = fit_group(
            list(zip(models, objectives, logs, strict=True)),
            train,
            train_surprisal,
            monitor,
            monitor_base,
            seed=seed,
            max_x_len=frames.max_x_len,
            device=torch_device,
            engine=engine,
        )
        for live in lives:
            live.summary["environment"] = {**environment.as_dict(), "engine": engine}
    for run, model, objective, last in zip(runs, models, objectives, lasts, strict=True):
        extra = {
            "variant": run.variant,
            "rate": run.rate,
            # R₀: the variant's reconstruction on the frozen base, which divides R in training
            "recon_scale": objective.scale,
            # the KL the run was trained toward; None under a fixed β schedule (no target)
            KL_TARGET_KEY: run.target_rate if common.beta_schedule == "rate_target" else None,
            "seed": run.seed,
            "base": run.base,
            "base_sha256": train_frozen.base_sha256,
            "final": last,
        }
        save_cvae(run.checkpoint(params.paths.cvae_dir), model.cpu(), extra)
    return lasts


def outputs(params: Params, one: Run) -> list[Path]:
    """What training a run writes: its checkpoint and its curves."""
    return [one.checkpoint(params.paths.cvae_dir), one.live_dir(params.paths.cvae_live)]


if __name__ == "__main__":
    run_stage(main)
