"""What the benchmarks share: interleaved timing, log-log slopes, peak RSS, the machine and
results files named from it; and the inputs they time (params, a sampled world, models).

Every figure the suite reports is a ratio of two things measured in the same run, interleaved
(candidate A, B, A, B, …) so that load from other processes hits both alike; a candidate's time
is the median of its repeats. No absolute time is ever a target.

Nothing here reads pipeline outputs: worlds are sampled, the base LM is freshly initialized
(costs do not depend on the weights) and its surprisal table is computed by the same
`score_tokens` the surprisal stage uses.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import torch

from harness.machine import machine as machine
from harness.machine import machine_name as machine_name
from harness.offline import REPO_ROOT as REPO_ROOT
from harness.offline import params_with as params_with
from harness.offline import raw_params as raw_params
from harness.offline import screening_only as screening_only
from harness.offline import train_and_evaluate as train_and_evaluate
from zgain.base.model import BaseLM, save_base
from zgain.base.normalizer import mean_surprisal
from zgain.base.surprisal import example_stats, score_tokens
from zgain.core.sequences import SeqBatch
from zgain.cvae.model import CVAE
from zgain.cvae.objective import Objective
from zgain.params import Params, load_params
from zgain.params.profile import merge as merge
from zgain.world.packed import pack_split
from zgain.world.synthetic import World, sample

HERE = Path(__file__).resolve().parent


def run_alone(doc: str, sections: Callable[[], Sequence[Section]]) -> None:
    """`python -m bench.<name>`: --help from the benchmark's docstring `doc`, else its sections
    measured at their default sizes and printed (run_all writes them to the results file)."""
    argparse.ArgumentParser(description=doc.splitlines()[0]).parse_args()
    for section in sections():
        section.print()


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


PEAK_RSS = """
import atexit, runpy, sys
from pathlib import Path

def write_peak(out):
    status = Path("/proc/self/status").read_text()
    peak = next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:"))
    out.write_text(peak)

out_file, module, *args = sys.argv[1:]
atexit.register(write_peak, Path(out_file))
sys.argv = [module, *args]
runpy.run_module(module, run_name="__main__", alter_sys=True)
"""
"""`python -c PEAK_RSS OUT_FILE MODULE ARGS…` runs MODULE as `python -m MODULE ARGS…` and, at
exit, writes its peak RSS (VmHWM, KiB) to OUT_FILE. VmHWM belongs to the address space created at
exec, so unlike a child's ru_maxrss it does not include the launching process's memory at fork
time; and the launcher imports nothing MODULE would not."""


def peak_rss_mib(module: str, args: Sequence[str], *, cwd: str | None = None, env=None) -> float:
    """Run `python -m module args` to completion and return its peak resident set size in MiB:
    the process's own VmHWM (PEAK_RSS)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "peak"
        command = [sys.executable, "-c", PEAK_RSS, str(out), module, *args]
        done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"{module} {' '.join(args)} failed: {done.stderr[-2000:]}")
        return int(out.read_text()) / 1024


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
    """A benchmark's block of its results file."""

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


# The inputs the benchmarks time.

VARIANT = "token_share_cc"
"""The variant every training benchmark runs (the one the design was chosen for)."""


def group_args(root: Path) -> list[str]:
    """A group stage's options for the screening group (VARIANT, seed 0) of the project at
    root, whose params.yaml names its screening base."""
    base = load_params(root / "params.yaml").base.screening
    return ["--base", str(base), "--variant", VARIANT, "--seed", "0"]


@dataclass
class Workload:
    """A world, n packed examples, a fresh base LM and its surprisal of those examples."""

    params: Params
    world: World
    batch: SeqBatch
    base: BaseLM
    surprisal: torch.Tensor  # (N, T) float32, what the surprisal stage would have written

    @property
    def max_x_len(self) -> int:
        return self.world.max_x_len

    def cvae(self) -> CVAE:
        """A CVAE on a copy of the base, initialized as the train_cvae stage does."""
        return CVAE(self.base, self.params.cvae.common.model)

    def objective(self, variant: str = VARIANT) -> Objective:
        stats = example_stats(self.surprisal.numpy(), self.batch.mask.numpy())
        normalizer = mean_surprisal(pa.array(stats["surprisal_mean"]))
        cvae = self.params.cvae
        return Objective.on_split(
            cvae.common,
            cvae.variant(variant),
            normalizer,
            cvae.rates[0],
            self.surprisal,
            self.batch.mask,
        )


def workload(params: Params, n: int, seed: int = 0) -> Workload:
    """Sample n examples of params' world and score them with a fresh base LM."""
    world = World.from_params(params.data)
    drawn = sample(world, n, np.random.default_rng(seed))
    batch = pack_split(drawn, world)
    torch.manual_seed(seed)
    base = BaseLM(params.base.model, world.vocab, world.max_len)
    surprisal = score_tokens(
        base, batch, max_x_len=world.max_x_len, batch_size=512, device=torch.device("cpu")
    )
    return Workload(params, world, batch, base, surprisal)


def save_fresh_base(params: Params, path: Path, seed: int = 0) -> Path:
    """A freshly initialized base LM for params' world saved at `path` (what a stage costs does
    not depend on the weights); returns `path`."""
    world = World.from_params(params.data)
    torch.manual_seed(seed)
    save_base(path, BaseLM(params.base.model, world.vocab, world.max_len))
    return path
