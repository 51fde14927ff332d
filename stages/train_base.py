"""Stage `train_base@<b>`: fit the z-free base model of seed b, then freeze it into a checkpoint
and its metadata (docs/architecture.md#bases)."""

from __future__ import annotations

import math
import time
from pathlib import Path

import typer

from zgain.base.decode import base_error_rates
from zgain.base.fit import VALIDATION_BATCH, fit_base, validation_nll
from zgain.base.model import BaseLM, save_base
from zgain.core.cli import BaseOption, run_stage
from zgain.core.environment import (
    DeviceOption,
    ThreadsOption,
    divide_cpus_by_default,
    setup_torch,
)
from zgain.core.io import sha256_file, sweep_temporaries, write_json
from zgain.core.tracking import live_run
from zgain.params import DataParams, Params, load_params
from zgain.world.packed import frames_of, load_packed


def run(
    params: Params, base: int, device: str | None = None, threads: int | None = None
) -> dict[str, float]:
    paths = params.paths.base(params.base.seed(base))
    frames = frames_of(params)
    sweep_temporaries(paths.base_model, paths.base_meta, paths.base_live)
    torch_device, environment = setup_torch(base, device=device, threads=threads)
    _, train = load_packed(params.paths.synthetic_dir, "train", frames)
    _, val = load_packed(params.paths.synthetic_dir, "val", frames)
    test_split, test = load_packed(params.paths.synthetic_dir, "test", frames)
    model = BaseLM(params.base.model, frames.vocab, frames.max_len)
    started = time.perf_counter()
    with live_run(paths.base_live) as (live, log):
        fit = fit_base(
            model,
            train,
            val,
            params.base,
            seed=base,
            max_x_len=frames.max_x_len,
            device=torch_device,
            log=log,
        )
        test_nll = validation_nll(
            model,
            test,
            max_x_len=frames.max_x_len,
            batch_size=VALIDATION_BATCH,
            device=torch_device,
        )
        oracle_nll = float(test_split.oracle_nll.mean())
        metrics = {"best_val_nll": fit.best_val_nll, "test_nll": test_nll}
        if math.isfinite(oracle_nll):  # a pairs file without oracle columns has none
            metrics |= {"test_oracle_nll": oracle_nll, "test_excess_nats": test_nll - oracle_nll}
        metrics |= {"best_step": fit.best_step, "steps": fit.steps}
        if not isinstance(params.data, DataParams):  # the usual measure of a seq2seq model
            rates = base_error_rates(
                model,
                test_split.x,
                test_split.x_len,
                test_split.y,
                test_split.y_len,
                frames,
                batch_size=VALIDATION_BATCH,
                device=torch_device,
            )
            metrics |= {f"test_{name}": value for name, value in rates.items()}
        # Timing and host facts describe this run, not the model: they stay out of the checkpoint
        # and out of base.json (which the report reads), in the dvclive summary alone, so a
        # retrained base that writes the same bytes leaves everything downstream up to date.
        run_facts = {
            "train_seconds": time.perf_counter() - started,
            "environment": environment.as_dict(),
        }
        for name, value in {**metrics, **run_facts}.items():
            live.summary[name] = value
    model.cpu()
    save_base(paths.base_model, model, extra={"metrics": metrics})
    write_json(
        {
            "checkpoint": paths.base_model,
            "seed": base,
            "sha256": sha256_file(paths.base_model),
            "config": model.checkpoint_config(),
            "train_params": params.base.model_dump(mode="json", exclude={"seeds"}),
            "metrics": metrics,
        },
        Path(paths.base_meta),
    )
    return metrics


def main(base: BaseOption, device: DeviceOption = None, threads: ThreadsOption = None) -> None:
    params = load_params()
    params.base.seed(base)  # an unknown base is a one-line error before any work
    divide_cpus_by_default(threads)
    metrics = run(params, base, device, threads)
    if "test_excess_nats" in metrics:
        nats = metrics["test_excess_nats"]
        typer.echo(f"base excess over the oracle on test: {nats:.4f} nats/sequence")
    else:
        typer.echo(f"base test NLL: {metrics['test_nll']:.4f} nats/sequence (no oracle)")
    if "test_sequence_error_rate" in metrics:
        typer.echo(
            f"base greedy error on test: {metrics['test_sequence_error_rate']:.1%} of sequences, "
            f"{metrics['test_token_error_rate']:.1%} of tokens"
        )


if __name__ == "__main__":
    run_stage(main)
