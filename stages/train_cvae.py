"""Stage `train_cvae@<variant>-<seed>`: one reconstruction variant, one seed."""

from __future__ import annotations

import torch
import typer

from zgain.fit_cvae import MONITOR_EXAMPLES, Objective, fit_cvae
from zgain.frozen import load_frozen
from zgain.io import run_dir
from zgain.models import CVAE, device_auto, load_base, save_checkpoint
from zgain.params import Params, load_params
from zgain.runtime import cvae_config, load_packed
from zgain.tracking import SeedOption, VariantOption, live_run
from zgain.training import configure_torch, select


def run(params: Params, variant: str, seed: int) -> dict[str, float]:
    world = params.data.world()
    common = params.cvae.common
    objective_variant = params.cvae.variant(variant)
    configure_torch(common.threads, seed)
    device = device_auto(common.device)
    train_split, train = load_packed(params.paths.synthetic_dir, "train", world)
    _, val = load_packed(params.paths.synthetic_dir, "val", world)
    frozen = load_frozen(params.paths, train_split, world.max_y_len + 1)
    model = CVAE(load_base(params.paths.base_model), cvae_config(common))
    objective = Objective(common, objective_variant, frozen.normalizer.mean_surprisal)
    monitor = select(val, slice(0, MONITOR_EXAMPLES))
    with live_run(run_dir(params.paths.cvae_live, variant, seed)) as (_, log):
        last = fit_cvae(
            model,
            train,
            torch.from_numpy(frozen.surprisal),
            monitor,
            objective,
            seed=seed,
            max_x_len=world.length_max,
            device=device,
            log=log,
        )
    extra = {"variant": variant, "seed": seed, "base_sha256": frozen.base_sha256, "final": last}
    save_checkpoint(
        run_dir(params.paths.cvae_dir, variant, seed).with_suffix(".pt"), model.cpu(), extra=extra
    )
    return last


def main(variant: VariantOption, seed: SeedOption) -> None:
    run(load_params(), variant, seed)


if __name__ == "__main__":
    typer.run(main)
