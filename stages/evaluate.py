"""Stages `evaluate@<base>-<variant>-<seed>` and `confirm_evaluate@<base>-<seed>`: gain
decomposition, posterior usage and recovery of every run of one group, each written to its own
folder."""

from __future__ import annotations

import math
from pathlib import Path

from zgain.base.frozen import load_frozen
from zgain.core.cli import run_stage
from zgain.core.environment import setup_torch
from zgain.core.group_stage import group_main, run_group
from zgain.core.io import check_provenance, write_json, write_table
from zgain.core.runs import ENVIRONMENT_KEY, KL_TARGET_KEY, Group, Run
from zgain.cvae.model import load_cvae
from zgain.evaluate.run_metrics import evaluation_table, revealed_positions, run_metrics
from zgain.evaluate.schema import EVAL_SCHEMA
from zgain.evaluate.scoring import evaluate_examples
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
    """Evaluate the runs of `group` at `rates` (default: every rate of its tier) side by side
    (zgain.core.group_stage.run_group); each run's metrics, in the group's run order."""
    return run_group(
        params, group, evaluate_runs, outputs, device=device, threads=threads, rates=rates
    )


main = group_main(run)


def evaluate_runs(
    params: Params, runs: list[Run], threads: int, *, device: str | None
) -> list[dict[str, float]]:
    """Score `runs` one after another in this process, loading the test split once."""
    frames = frames_of(params)
    settings = params.evaluate
    torch_device, environment = setup_torch(settings.seed, device=device, threads=threads)
    split, batch = load_packed(params.paths.synthetic_dir, "test", frames)
    base_paths = params.paths.base(runs[0].base)
    frozen = load_frozen(base_paths, split, frames.n_targets)
    revealed = revealed_positions(split, frozen.mask, settings.reveal_min_nats)
    base = frozen.sequence_surprisal
    out = []
    for one in runs:
        checkpoint = one.checkpoint(params.paths.cvae_dir)
        model, payload = load_cvae(checkpoint)
        check_provenance(
            str(checkpoint),
            payload.get("base_sha256"),
            base_paths.base_model,
            frozen.base_sha256,
            remedy=f"retrain the run (`dvc repro {one.stage('train_cvae')}`)",
        )
        scores = evaluate_examples(
            model,
            batch,
            iw_samples=settings.iw_samples,
            batch_size=settings.batch_size,
            max_x_len=frames.max_x_len,
            device=torch_device,
            seed=settings.seed,
        )
        table = evaluation_table(one.variant, one.seed, split, base, frozen.mask, scores)
        metrics = run_metrics(
            split,
            base,
            frozen.mask,
            scores,
            revealed,
            iw_samples=settings.iw_samples,
            probe_test_fraction=settings.probe_test_fraction,
            seed=settings.seed,
        )
        write_table(table, one.eval_examples(params.paths.eval_dir), EVAL_SCHEMA)
        # JSON has no NaN: an undefined metric (e.g. a correlation of a constant) is null.
        finite = {k: (v if math.isfinite(v) else None) for k, v in metrics.items()}
        record = {
            **finite,
            KL_TARGET_KEY: payload.get(KL_TARGET_KEY),
            ENVIRONMENT_KEY: environment.as_dict(),
        }
        write_json(record, one.eval_metrics(params.paths.eval_dir))
        out.append(metrics)
    return out


def outputs(params: Params, one: Run) -> list[Path]:
    """What evaluating a run writes: its folder of per-example scores and metrics."""
    return [one.eval_dir(params.paths.eval_dir)]


if __name__ == "__main__":
    run_stage(main)
