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
    params: Params,
    group: Group,
    task: RunsTask,
    outputs: Callable[[Params, Run], Sequence[Path]],
    *,
    device: str | None = None,
    threads: int | None = None,
    rates: list[float] | None = None,
) -> list[R]:
    """task over the runs of `group` (group_runs), side by side as the device and threads allow;
    the results come in the group's run order. Leftover temporaries of a killed attempt are
    swept from each run's `outputs` first."""
    runs = group_runs(params, group, rates)
    for one in runs:
        sweep_temporaries(*outputs(params, one))
    total = resolve_threads(threads, resolve_workers())
    layout = plan(len(runs), total, resolve_device(device).type)
    return side_by_side(partial(task, params, device=device), runs, layout)


def group_runs(params: Params, group: Group, rates: list[float] | None = None) -> list[Run]:
    """The runs of `group` at `rates` (default: every listed rate of its tier): a screening
    group's at cvae.rates, a confirming group's at cvae.confirm's variants and rates;
    ParamsError naming a group or rate params do not list."""
    check_group(params, group)
    if not group.confirming:
        return group.runs(params.cvae.rate(r) for r in (rates or params.cvae.rates))
    confirm = params.cvae.confirm
    for rate in rates or ():
        if rate not in confirm.rates:
            known = ", ".join(map(repr, confirm.rates))
            raise ParamsError(f"cvae.confirm.rates: no rate {rate!r} (listed: {known})")
    return group.runs(rates or confirm.rates, confirm.variants)


def resolve_group(params: Params, base: int, variant: str | None, seed: int) -> Group:
    """The group a stage's options name (no variant: the confirming group of (base, seed));
    ParamsError naming an unknown variant, seed or base, or a base of the other tier."""
    if variant is None:
        group = Group.confirming_of(base, seed)
    else:
        group = Group.screening(base, variant, seed)
    check_group(params, group)
    return group


def check_group(params: Params, group: Group) -> None:
    """ParamsError unless params list `group`: its base, seed and variant, and its base in its
    tier (screening groups on the screening base, confirming groups on cvae.confirm.bases)."""
    params.base.seed(group.base)
    if group.confirming:
        confirm = params.cvae.confirm
        if group.base not in confirm.bases:
            known = ", ".join(map(str, confirm.bases)) or "none"
            raise ParamsError(f"cvae.confirm.bases: no base {group.base} (listed: {known})")
        if group.seed not in confirm.seeds:
            known = ", ".join(map(str, confirm.seeds))
            raise ParamsError(f"cvae.confirm.seeds: no seed {group.seed} (listed: {known})")
        return
    params.cvae.variant(str(group.variant))
    screening = params.base.screening
    if group.base != screening:
        raise ParamsError(f"--base {group.base}: screening groups train on base {screening} only")
    params.cvae.seed(group.seed)


def group_main(stage: Callable[..., object]) -> Callable[..., None]:
    """The command line of a group stage whose `stage(params, group, *, device, threads)` does
    the work: `--base`, `--variant` (omitted: the confirming group), `--seed`, `--device`,
    `--threads`."""

    def main(
        base: BaseOption,
        seed: SeedOption,
        variant: VariantOption = None,
        device: DeviceOption = None,
        threads: ThreadsOption = None,
    ) -> None:
        params = load_params()
        # an unknown group is a one-line error now, not after waiting for free CPUs
        group = resolve_group(params, base, variant, seed)
        divide_cpus_by_default(threads)
        stage(params, group, device=device, threads=threads)

    return main
