"""Stage `train_cvae@<variant>-<rate>-<seed>`: one reconstruction variant, one target rate, one
seed."""

from __future__ import annotations

import torch

from zgain.base.frozen import load_frozen
from zgain.base.model import load_base
from zgain.core.cli import RateOption, SeedOption, VariantOption, run_stage
from zgain.core.environment import DeviceOption, ThreadsOption, setup_torch
from zgain.core.io import run_dir, sweep_temporaries
from zgain.core.sequences import select
from zgain.core.tracking import live_run
from zgain.cvae.fit import fit_cvae
from zgain.cvae.model import CVAE, save_cvae
from zgain.cvae.objective import Objective
from zgain.params import Params, load_params
from zgain.world.packed import load_packed
from zgain.world.synthetic import World


def run(
    params: Params,
    variant: str,
    rate: float,
    seed: int,
    device: str | None = None,
    threads: int | None = None,
) -> dict[str, float]:
    world = World.from_params(params.data)
    common = params.cvae.common
    resolved = params.cvae.variant(variant)
    rate = params.cvae.rate(rate)
    sweep_temporaries(
        run_dir(params.paths.cvae_dir, variant, rate, seed).with_suffix(".pt"),
        run_dir(params.paths.cvae_live, variant, rate, seed),
    )
    torch_device, environment = setup_torch(seed, device=device, threads=threads)
    train_split, train = load_packed(params.paths.synthetic_dir, "train", world)
    val_split, val = load_packed(params.paths.synthetic_dir, "val", world)
    frozen = load_frozen(params.paths, train_split, world.n_targets)
    objective = Objective(common, resolved, frozen.normalizer.mean_surprisal, rate)
    model = CVAE(load_base(params.paths.base_model), common.model)
    monitor_rows = slice(0, common.val_examples)
    monitor = select(val, monitor_rows)
    val_frozen = load_frozen(params.paths, val_split, world.n_targets)
    monitor_base = torch.from_numpy(val_frozen.sequence_surprisal[monitor_rows])
    with live_run(run_dir(params.paths.cvae_live, variant, rate, seed)) as (live, log):
        last = fit_cvae(
            model,
            train,
            torch.from_numpy(frozen.surprisal),
            monitor,
            monitor_base,
            objective,
            seed=seed,
            max_x_len=world.max_x_len,
            device=torch_device,
            log=log,
        )
        live.summary["environment"] = environment.as_dict()
    extra = {
        "variant": variant,
        "rate": rate,
        # the KL the run was trained toward; None under a fixed β schedule (no target)
        "kl_target": rate if common.beta_schedule == "rate_target" else None,
        "seed": seed,
        "base_sha256": frozen.base_sha256,
        "final": last,
    }
    checkpoint = run_dir(params.paths.cvae_dir, variant, rate, seed).with_suffix(".pt")
    save_cvae(checkpoint, model.cpu(), extra)
    return last


def main(
    variant: VariantOption,
    rate: RateOption,
    seed: SeedOption,
    device: DeviceOption = None,
    threads: ThreadsOption = None,
) -> None:
    run(load_params(), variant, rate, seed, device, threads)


if __name__ == "__main__":
    run_stage(main)
