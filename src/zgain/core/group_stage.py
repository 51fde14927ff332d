"""What the group stages (`train_cvae`, `evaluate` and their confirming twins) share: the runs of
one group laid out over the machine, and the stage's command line
(docs/architecture.md#runs-and-groups)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import TypeVar

from zgain.core.cli import BaseOption, SeedOption, VariantOption
from zgain.core.environment import (
    DeviceOption,
    ThreadsOption,
    divide_cpus_by_default,
    resolve_device,
    resolve_threads,
    resolve_workers,
)
from zgain.core.errors import ParamsError
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
    base: int,
    variant: str | None,
    seed: int,
    device: str | None = None,
    threads: int | None = None,
    rates: list[float] | None = None,
) -> list[R]:
    """task over the runs of one group, side by side as the device and threads allow: with a
    variant, the screening group (base, variant, seed) at `rates` (default: every listed rate);
    without, the confirming group (base, seed) at cvae.confirm's variants and rates. The results
    come in the group's run order (zgain.core.runs.Group.runs).

    Leftover temporaries of a killed attempt are swept from each run's `outputs` first.
    """
    group = resolve_group(params, base, variant, seed)
    if group.confirming:
        confirm = params.cvae.confirm
        for rate in rates or ():
            if rate not in confirm.rates:
                known = ", ".join(map(repr, confirm.rates))
                raise ParamsError(f"cvae.confirm.rates: no rate {rate!r} (listed: {known})")
        runs = group.runs(rates or confirm.rates, confirm.variants)
    else:
        runs = group.runs(params.cvae.rate(r) for r in (rates or params.cvae.rates))
    for one in runs:
        sweep_temporaries(*outputs(params, one))
    total = resolve_threads(threads, resolve_workers())
    layout = plan(len(runs), total, resolve_device(device).type)
    return side_by_side(partial(task, params, device=device), runs, layout)


def resolve_group(params: Params, base: int, variant: str | None, seed: int) -> Group:
    """The group these stage options name; ParamsError naming an unknown variant, seed or base,
    or a base of the other tier."""
    params.base.seed(base)
    screening = params.base.screening
    if variant is None:
        confirm = params.cvae.confirm
        if base not in confirm.bases:
            known = ", ".join(map(str, confirm.bases)) or "none"
            raise ParamsError(f"cvae.confirm.bases: no base {base} (listed: {known})")
        if seed not in confirm.seeds:
            known = ", ".join(map(str, confirm.seeds))
            raise ParamsError(f"cvae.confirm.seeds: no seed {seed} (listed: {known})")
        return Group(base, seed)
    params.cvae.variant(variant)
    if base != screening:
        raise ParamsError(f"--base {base}: screening groups train on base {screening} only")
    return Group(base, params.cvae.seed(seed), variant)


def group_runner(
    task: RunsTask, outputs: Callable[[Params, Run], Sequence[Path]], doc: str
) -> Callable[..., list]:
    """A group stage's `run(params, base, variant, seed, device=None, threads=None, rates=None)`:
    `run_group` with this stage's task and per-run outputs, documented by `doc`."""

    run = partial(run_group, task, outputs)
    run.__doc__ = doc
    return run


def group_main(run: Callable[..., object]) -> Callable[..., None]:
    """The command line of a group stage whose `run(params, base, variant, seed, device,
    threads)` does the work: `--base`, `--variant` (omitted: the confirming group), `--seed`,
    `--device`, `--threads`."""

    def main(
        base: BaseOption,
        seed: SeedOption,
        variant: VariantOption = None,
        device: DeviceOption = None,
        threads: ThreadsOption = None,
    ) -> None:
        params = load_params()
        # an unknown group is a one-line error now, not after waiting for free CPUs
        resolve_group(params, base, variant, seed)
        divide_cpus_by_default(threads)
        run(params, base, variant, seed, device, threads)

    return main
