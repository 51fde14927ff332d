"""What the two group stages (`train_cvae`, `evaluate`) share: the runs of one (variant, seed)
group laid out over the machine, and the stage's command line
(docs/architecture.md#runs-and-groups)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import TypeVar

from zgain.core.cli import SeedOption, VariantOption
from zgain.core.environment import (
    DeviceOption,
    ThreadsOption,
    divide_cpus_by_default,
    resolve_device,
    resolve_threads,
    resolve_workers,
)
from zgain.core.io import sweep_temporaries
from zgain.core.runs import Group, Run
from zgain.core.sidebyside import plan, side_by_side
from zgain.params import Params, load_params

R = TypeVar("R")

RunsTask = Callable[..., list[R]]
"""task(params, runs, threads, *, device) -> one result per run, in the runs' order."""


def run_group(
    task: RunsTask,
    outputs: Callable[[Params, Run], Sequence[Path]],
    params: Params,
    variant: str,
    seed: int,
    device: str | None = None,
    threads: int | None = None,
    rates: list[float] | None = None,
) -> list[R]:
    """task over the runs of group (variant, seed) at `rates` (default: every listed rate),
    side by side as the device and threads allow; the results in the order of the rates.

    Leftover temporaries of a killed attempt are swept from each run's `outputs` first.
    """
    params.cvae.variant(variant)  # an unknown variant or seed stops here, by name
    group = Group(variant, params.cvae.seed(seed))
    runs = group.runs(params.cvae.rate(r) for r in (rates or params.cvae.rates))
    for one in runs:
        sweep_temporaries(*outputs(params, one))
    total = resolve_threads(threads, resolve_workers())
    layout = plan(len(runs), total, resolve_device(device).type)
    return side_by_side(partial(task, params, device=device), runs, layout)


def group_runner(
    task: RunsTask, outputs: Callable[[Params, Run], Sequence[Path]], doc: str
) -> Callable[..., list]:
    """A group stage's `run(params, variant, seed, device=None, threads=None, rates=None)`:
    `run_group` with this stage's task and per-run outputs, documented by `doc`."""

    run = partial(run_group, task, outputs)
    run.__doc__ = doc
    return run


def group_main(run: Callable[..., object]) -> Callable[..., None]:
    """The command line of a group stage whose `run(params, variant, seed, device, threads)`
    does the work: `--variant`, `--seed`, `--device`, `--threads`."""

    def main(
        variant: VariantOption,
        seed: SeedOption,
        device: DeviceOption = None,
        threads: ThreadsOption = None,
    ) -> None:
        params = load_params()
        # an unknown variant or seed is a one-line error now, not after waiting for free CPUs
        params.cvae.variant(variant)
        params.cvae.seed(seed)
        divide_cpus_by_default(threads)
        run(params, variant, seed, device, threads)

    return main
