"""A group's runs side by side over the CPU cores: forked processes with a share of the threads.

On 2 cores two runs with one thread each measured 1.35–1.6× the throughput of one run with two
threads, while stacking runs in batched matmuls measured slower (docs/performance.md), so on a
CPU a group is split into shares, one forked process each. On a GPU a group stays in one
process, its runs in lockstep on the device. The processes are forked before the parent runs
any torch operation (a thread pool does not survive a fork); each child sets up torch itself.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True)
class Plan:
    """How a group of `n` runs uses the machine: `processes` side by side, each with `threads`
    torch threads, run k in share k mod processes."""

    processes: int
    threads: int

    def shares(self, items: Sequence[T]) -> list[list[T]]:
        """items dealt round-robin into `processes` shares (none empty)."""
        return [list(items[k :: self.processes]) for k in range(self.processes)]


def plan(n_runs: int, threads: int, device_type: str) -> Plan:
    """One process per run up to one per thread on a CPU; one process on an accelerator."""
    if n_runs < 1 or threads < 1:
        raise ValueError(f"a plan needs n_runs >= 1 and threads >= 1, got {n_runs}, {threads}")
    if device_type != "cpu":
        return Plan(1, threads)
    processes = min(n_runs, threads)
    return Plan(processes, threads // processes)


def side_by_side(
    task: Callable[[list[T], int], list[R]], items: Sequence[T], layout: Plan
) -> list[R]:
    """task(share, threads) for each share of `items`, side by side; results in items' order.

    With one process the task runs here. Otherwise each share runs in a forked child and the
    first exception of any child is raised here (a user error keeps its one-line message).
    """
    shares = layout.shares(items)
    if layout.processes == 1:
        return task(shares[0], layout.threads)
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(max_workers=layout.processes, mp_context=context) as pool:
        futures = [pool.submit(task, share, layout.threads) for share in shares]
        results = [future.result() for future in futures]
    ordered: list[R] = [None] * len(items)  # type: ignore[list-item]
    for k, share_results in enumerate(results):
        ordered[k :: layout.processes] = share_results
    return ordered
