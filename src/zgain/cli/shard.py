"""`zgain shard`: one worker's share of the per-run stages, shared through DVC's remote.

A unit of work is one group of runs: an item of the `train_cvae` / `evaluate` matrices (a
screening group, `0-token_mean-0`) or of their confirming twins (`confirm_1-0`, the stages
`confirm_train_cvae@1-0` and `confirm_evaluate@1-0`). Units are sorted by name and dealt
round-robin: shard i of n takes items i, i+n, i+2n, …, so every item
lands on exactly one shard, its training and its evaluation on the same one. The shard pulls
what its items need (`dvc repro --pull` also restores one another worker already pushed), runs
them, and pushes their outputs with the run-cache, from which `dvc repro --pull` on any clone
restores them instead of recomputing.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterable, Sequence
from typing import Annotated

import typer

from zgain.core.runs import CONFIRM_PREFIX, GROUP_STAGES

RUN_STAGES = GROUP_STAGES
"""The per-group stages, in DAG order (zgain.core.runs); a confirming group's carry
CONFIRM_PREFIX."""


def run_names(stage_names: Iterable[str]) -> list[str]:
    """Sorted names of the groups: `0-token_mean-0` for `train_cvae@0-token_mean-0`,
    `confirm_1-0` for `confirm_train_cvae@1-0`."""
    runs = set()
    for name in stage_names:
        stage, at, item = name.partition("@")
        prefix = CONFIRM_PREFIX if stage.startswith(CONFIRM_PREFIX) else ""
        if at and stage.removeprefix(prefix) in RUN_STAGES:
            runs.add(prefix + item)
    return sorted(runs)


def group_stages(run: str) -> list[str]:
    """The stages of group `run` (a `run_names` entry), in DAG order."""
    prefix = CONFIRM_PREFIX if run.startswith(CONFIRM_PREFIX) else ""
    item = run.removeprefix(prefix)
    return [f"{prefix}{stage}@{item}" for stage in RUN_STAGES]


def shard_stages(stage_names: Sequence[str], index: int, count: int) -> list[str]:
    """The stages of shard `index` of `count`: its groups' stages, each group's in DAG order."""
    present = set(stage_names)
    return [
        stage
        for run in run_names(stage_names)[index::count]
        for stage in group_stages(run)
        if stage in present
    ]


def dvc(*args: str, capture: bool = False) -> str:
    """Run `dvc` from this interpreter's environment; a failure exits with dvc's status."""
    print(f"$ dvc {' '.join(args)}", flush=True)
    done = subprocess.run(
        [sys.executable, "-m", "dvc", *args], capture_output=capture, text=True, check=False
    )
    if done.returncode != 0:
        if capture:
            print(done.stdout + done.stderr, file=sys.stderr)
        print(f"error: `dvc {' '.join(args)}` failed (exit {done.returncode})", file=sys.stderr)
        raise typer.Exit(done.returncode)
    return done.stdout if capture else ""


def default_remote() -> str | None:
    """The name of the default DVC remote, None when there is none."""
    done = subprocess.run(
        [sys.executable, "-m", "dvc", "remote", "default"], capture_output=True, text=True
    )
    return done.stdout.strip() if done.returncode == 0 else None


def shard(
    index: Annotated[int, typer.Option(min=0, help="this worker's shard, 0 ≤ index < count")],
    count: Annotated[int, typer.Option(min=1, help="how many shards the runs are split into")],
    dry_run: Annotated[bool, typer.Option(help="only list this shard's stages")] = False,
) -> None:
    """Run shard INDEX of COUNT of the train_cvae/evaluate runs; push them with the run-cache."""
    if index >= count:
        raise typer.BadParameter(
            f"must be below --count ({count}), got {index}", param_hint="--index"
        )
    stages = shard_stages(dvc("stage", "list", "--name-only", capture=True).split(), index, count)
    print(f"shard {index} of {count}: {len(stages)} stages: {' '.join(stages) or 'none'}")
    if dry_run or not stages:
        return
    if default_remote() is None:  # stop before any work that could not be shared
        print(
            "error: no default DVC remote to push to: add one with `dvc remote add -d NAME URL`",
            file=sys.stderr,
        )
        raise typer.Exit(2)
    dvc("repro", "--pull", *stages)
    dvc("push", "--run-cache", *stages)
