"""Shared helpers of the benchmarks: interleaved timing, log-log slopes, peak RSS, the machine.

Every figure the suite reports is a ratio of two things measured in the same run, interleaved
(candidate A, B, A, B, …) so that load from other processes hits both alike; a candidate's time
is the median of its repeats. No absolute time is ever a target.
"""

from __future__ import annotations

import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

HERE = Path(__file__).resolve().parent


def interleaved(
    candidates: Mapping[str, Callable[[], object]], repeats: int, warmup: int = 1
) -> dict[str, list[float]]:
    """Seconds of each candidate per repeat, run A, B, C, B, C, A, … (the order rotates).

    Each candidate runs `warmup` untimed times first (caches, allocator, lazy init).
    """
    if repeats < 1:
        raise ValueError(f"repeats must be >= 1, got {repeats}")
    names = list(candidates)
    for _ in range(warmup):
        for name in names:
            candidates[name]()
    times: dict[str, list[float]] = {name: [] for name in names}
    for repeat in range(repeats):
        shift = repeat % len(names)
        for name in names[shift:] + names[:shift]:
            start = time.perf_counter()
            candidates[name]()
            times[name].append(time.perf_counter() - start)
    return times


def median(values: Sequence[float]) -> float:
    return float(statistics.median(values))


def loglog_slope(sizes: Sequence[float], seconds: Sequence[float]) -> float:
    """Least-squares slope of log(seconds) on log(size): the exponent p of seconds ∝ size^p."""
    if len(sizes) != len(seconds) or len(sizes) < 2:
        raise ValueError(f"need >= 2 matching points, got {len(sizes)} and {len(seconds)}")
    x, y = np.asarray(sizes, float), np.asarray(seconds, float)
    if not (np.all(x > 0) and np.all(y > 0) and np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise ValueError("sizes and seconds must be finite and > 0")
    x, y = np.log(x), np.log(y)
    return float(np.polyfit(x, y, 1)[0])


def peak_rss_mib(module: str, args: Sequence[str], *, cwd: str | None = None, env=None) -> float:
    """Run `python -m module args` to completion and return its peak resident set size in MiB.

    The peak is the process's own VmHWM (see bench/hwm.py); ru_maxrss of a forked child would
    also count this (large) process's memory at fork time.
    """
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "peak"
        command = [sys.executable, "-m", "bench.hwm", str(out), module, *args]
        done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"{module} {' '.join(args)} failed: {done.stderr[-2000:]}")
        return int(out.read_text()) / 1024


def machine() -> list[str]:
    """Lines describing where the figures were measured, and the commit they were measured on."""
    from bench.wall_time import short_hash

    try:
        commit = short_hash(cwd=HERE) or "unknown"
    except OSError:  # no git here
        commit = "unknown"
    return [
        f"- commit: {commit}",
        f"- CPUs available: {len(os.sched_getaffinity(0))} (of {os.cpu_count()} on the machine)",
        f"- torch {torch.__version__}, {torch.get_num_threads()} intra-op threads",
        f"- Python {platform.python_version()}, {platform.machine()}",
        f"- load average at start: {', '.join(f'{v:.2f}' for v in os.getloadavg())}",
    ]


def machine_name() -> str:
    """Where the figures are measured, in a file name: the GPU's model when torch sees one
    (`nvidia-h200`), else the CPUs this process may use (`cpu2`)."""
    if torch.cuda.is_available():
        return re.sub(r"[^a-z0-9]+", "-", torch.cuda.get_device_name(0).lower()).strip("-")
    return f"cpu{len(os.sched_getaffinity(0))}"


def results_path(script: str) -> Path:
    """bench/SCRIPT-MACHINE.md: the results of bench script `script` on this machine, so that
    machines do not overwrite each other's figures."""
    return HERE / f"{script}-{machine_name()}.md"


@dataclass
class Row:
    """One reported figure: what, the measured value, its target and whether it meets it."""

    label: str
    value: str
    target: str = ""
    met: bool | None = None  # None: no target

    def verdict(self) -> str:
        return "" if self.met is None else ("met" if self.met else "**missed**")


@dataclass
class Section:
    """A benchmark's block of results.md."""

    title: str
    rows: list[Row] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def markdown(self) -> str:
        lines = [f"## {self.title}", "", "| figure | measured | target | |", "|---|---|---|---|"]
        lines += [f"| {r.label} | {r.value} | {r.target} | {r.verdict()} |" for r in self.rows]
        if self.notes:
            lines += [""] + self.notes
        return "\n".join(lines) + "\n"

    def print(self) -> None:
        print(f"== {self.title}")
        for r in self.rows:
            target = f"   (target {r.target}: {r.verdict()})" if r.target else ""
            print(f"  {r.label}: {r.value}{target}")
        for note in self.notes:
            print(f"  {note}")
