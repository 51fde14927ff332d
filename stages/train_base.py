"""Stage `train_base`: fit the z-free base model, then freeze it into a checkpoint + metadata."""

from __future__ import annotations

import time
from dataclasses import asdict
from pathlib import Path

import typer

from zgain.fit_base import fit_base, validation_nll
from zgain.io import sha256_file, write_json
from zgain.models import BaseLM, device_auto, save_checkpoint
from zgain.params import Params, load_params
from zgain.runtime import base_config, load_packed
from zgain.tracking import live_run
from zgain.training import configure_torch


def run(params: Params) -> dict[str, float]:
    world = params.data.world()
    configure_torch(params.base.threads, params.base.seed)
    device = device_auto(params.base.device)
    _, train = load_packed(params.paths.synthetic_dir, "train", world)
    _, val = load_packed(params.paths.synthetic_dir, "val", world)
    test_split, test = load_packed(params.paths.synthetic_dir, "test", world)
    model = BaseLM(base_config(params.base, params.data))
    started = time.perf_counter()
    with live_run(params.paths.base_live) as (live, log):
        fit = fit_base(
            model, train, val, params.base, max_x_len=world.length_max, device=device, log=log
        )
        test_nll = validation_nll(
            model, test, max_x_len=world.length_max, batch_size=1024, device=device
        )
        metrics = {
            "best_val_nll": fit.best_val_nll,
            "test_nll": test_nll,
            "test_oracle_nll": float(test_split.oracle_nll.mean()),
            "test_excess_nats": test_nll - float(test_split.oracle_nll.mean()),
            "best_step": fit.best_step,
            "steps": fit.steps,
            "train_seconds": time.perf_counter() - started,
        }
        for name, value in metrics.items():
            live.summary[name] = value
    model.cpu()
    save_checkpoint(params.paths.base_model, model, extra={"metrics": metrics})
    write_json(
        {
            "checkpoint": params.paths.base_model,
            "sha256": sha256_file(params.paths.base_model),
            "config": asdict(model.config),
            "train_params": asdict(params.base),
            "metrics": metrics,
        },
        Path(params.paths.base_meta),
    )
    return metrics


def main() -> None:
    metrics = run(load_params())
    typer.echo(
        f"base excess over the oracle on test: {metrics['test_excess_nats']:.4f} nats/sequence"
    )


if __name__ == "__main__":
    typer.run(main)
