"""Stage `train_base`: fit the z-free base model, then freeze it into a checkpoint + metadata."""

from __future__ import annotations

import time
from pathlib import Path

import typer

from zgain.base.fit import VALIDATION_BATCH, fit_base, validation_nll
from zgain.base.model import BaseLM, save_base
from zgain.core.cli import run_stage
from zgain.core.environment import (
    DeviceOption,
    ThreadsOption,
    divide_cpus_by_default,
    setup_torch,
)
from zgain.core.io import sha256_file, sweep_temporaries, write_json
from zgain.core.tracking import live_run
from zgain.params import Params, load_params
from zgain.world.packed import load_packed
from zgain.world.synthetic import World


def run(params: Params, device: str | None = None, threads: int | None = None) -> dict[str, float]:
    world = World.from_params(params.data)
    sweep_temporaries(params.paths.base_model, params.paths.base_meta, params.paths.base_live)
    torch_device, environment = setup_torch(params.base.seed, device=device, threads=threads)
    _, train = load_packed(params.paths.synthetic_dir, "train", world)
    _, val = load_packed(params.paths.synthetic_dir, "val", world)
    test_split, test = load_packed(params.paths.synthetic_dir, "test", world)
    model = BaseLM(params.base.model, world.vocab, world.max_len)
    started = time.perf_counter()
    with live_run(params.paths.base_live) as (live, log):
        fit = fit_base(
            model, train, val, params.base, max_x_len=world.max_x_len, device=torch_device, log=log
        )
        test_nll = validation_nll(
            model, test, max_x_len=world.max_x_len, batch_size=VALIDATION_BATCH, device=torch_device
        )
        oracle_nll = float(test_split.oracle_nll.mean())
        metrics = {
            "best_val_nll": fit.best_val_nll,
            "test_nll": test_nll,
            "test_oracle_nll": oracle_nll,
            "test_excess_nats": test_nll - oracle_nll,
            "best_step": fit.best_step,
            "steps": fit.steps,
        }
        # Timing and host facts describe this run, not the model: they stay out of the checkpoint.
        run_facts = {
            "train_seconds": time.perf_counter() - started,
            "environment": environment.as_dict(),
        }
        for name, value in {**metrics, **run_facts}.items():
            live.summary[name] = value
    model.cpu()
    save_base(params.paths.base_model, model, extra={"metrics": metrics})
    write_json(
        {
            "checkpoint": params.paths.base_model,
            "sha256": sha256_file(params.paths.base_model),
            "config": model.checkpoint_config(),
            "train_params": params.base.model_dump(mode="json"),
            "metrics": metrics,
            **run_facts,
        },
        Path(params.paths.base_meta),
    )
    return metrics


def main(device: DeviceOption = None, threads: ThreadsOption = None) -> None:
    divide_cpus_by_default(threads)
    metrics = run(load_params(), device, threads)
    typer.echo(
        f"base excess over the oracle on test: {metrics['test_excess_nats']:.4f} nats/sequence"
    )


if __name__ == "__main__":
    run_stage(main)
