"""Where and how torch runs: device, threads, autocast, seeding, finiteness checks.

Device and thread count change speed, not results, so they are not experiment params: they
come from the environment (`ZGAIN_DEVICE`, `ZGAIN_THREADS`) or a stage's `--device` /
`--threads` options, and every run records what it actually used (`RunEnvironment`).

`ZGAIN_WORKERS=N` says that up to N stages run at once on this host (`dvc queue start -j N`):
each stage then claims a free worker slot k in 0..N-1 (an exclusive lock on a file, released
when the process exits), runs on `cuda:(k mod n_gpus)` when its device is `auto` and CUDA is
present, and takes `cpus // N` threads unless told otherwise. With neither variable set, a
torch stage claims the CPUs that are free on the host and waits when none is (`claim_cpus`), so
stages started at once never oversubscribe the cores.
"""

from __future__ import annotations

import contextlib
import fcntl
import math
import os
import platform
import re
import socket
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, Annotated, Any, Literal

import torch
import typer

from zgain.core.errors import NonFiniteLossError, ParamsError

DEVICE_ENV = "ZGAIN_DEVICE"
THREADS_ENV = "ZGAIN_THREADS"
WORKERS_ENV = "ZGAIN_WORKERS"
ENGINE_ENV = "ZGAIN_ENGINE"
Engine = Literal["lockstep", "stacked", "compiled"]
ENGINES: tuple[Engine, ...] = ("lockstep", "stacked", "compiled")
WORKER_DIR_ENV = "ZGAIN_WORKER_DIR"  # where the slot lock files live (default: a temp folder)
AUTO = "auto"
_DEVICE_PATTERN = re.compile(r"^(auto|cpu|mps|cuda(:\d+)?)$")

DeviceOption = Annotated[
    str | None,
    typer.Option(
        envvar=DEVICE_ENV, help="auto, cpu, mps, cuda or cuda:N (speed only, not a param)"
    ),
]
ThreadsOption = Annotated[
    int | None,
    typer.Option(envvar=THREADS_ENV, help="torch CPU threads (default: every available CPU)"),
]


@dataclass(frozen=True)
class RunEnvironment:
    """What a run actually ran on; recorded beside its metrics, never a tracked param."""

    device: str  # e.g. "cpu", "cuda:1"
    dtype: str  # compute dtype of the forward passes: "bfloat16" under CUDA autocast
    threads: int  # torch intra-op CPU threads
    torch_version: str
    host: str  # the machine's host name
    worker: int | None  # slot k of ZGAIN_WORKERS concurrent workers; None outside a pool
    cpu_model: str = ""  # /proc/cpuinfo's model name (or platform.processor())
    cpu_isa: str = ""  # the vector paths torch and numpy took, e.g. "torch AVX512, numpy X86_V4"

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def available_cpus() -> int:
    """CPUs this process may run on (its affinity mask, so a queue worker's share counts)."""
    return len(os.sched_getaffinity(0))


def resolve_workers(value: str | None = None) -> int:
    """How many stages may run at once on this host: `value`, else `ZGAIN_WORKERS`, else 1."""
    raw = value if value is not None else os.environ.get(WORKERS_ENV)
    if raw is None or raw == "":
        return 1
    return positive_int("workers", raw)


def positive_int(name: str, raw: int | str) -> int:
    """raw (an option's or environment variable's value) as an integer >= 1, else a ParamsError
    naming `name`."""
    try:
        value = int(raw)
    except ValueError:
        raise ParamsError(f"{name}: must be a positive integer, got {raw!r}") from None
    if value < 1:
        raise ParamsError(f"{name}: must be a positive integer, got {raw!r}")
    return value


def worker_dir() -> Path:
    """The folder of the slot lock files: `ZGAIN_WORKER_DIR`, else one per user in /tmp."""
    configured = os.environ.get(WORKER_DIR_ENV)
    if configured:
        return Path(configured)
    return Path(tempfile.gettempdir()) / f"zgain-workers-{os.getuid()}"


def try_lock(path: Path) -> IO[str] | None:
    """An exclusive flock on `path` (created if missing), held while the handle stays open; None
    when another process holds it."""
    handle = path.open("a")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        return None
    return handle


_CLAIMED: dict[tuple[Path, int], tuple[int, IO[str]]] = {}


def claim_worker(workers: int, directory: Path | None = None) -> int | None:
    """This process's slot k in 0..workers-1 on this host, or None when workers is 1.

    The slot is an exclusive flock on `<directory>/worker<k>.lock`, held until the process
    exits (the OS releases it even after a crash), so stages running at once get distinct
    slots whatever started them. More stages than slots is an error, not a wait.
    """
    if workers == 1:
        return None
    directory = directory or worker_dir()
    held = _CLAIMED.get((directory, workers))
    if held is not None:
        return held[0]
    directory.mkdir(parents=True, exist_ok=True)
    for slot in range(workers):
        handle = try_lock(directory / f"worker{slot}.lock")
        if handle is None:
            continue
        _CLAIMED[(directory, workers)] = (slot, handle)
        return slot
    raise ParamsError(
        f"workers: all {workers} worker slots in {directory} are taken "
        f"(more stages run at once than {WORKERS_ENV}={workers})"
    )


_CPU_CLAIM: list[IO[str]] = []
CPU_POLL_SECONDS = 0.5


def claim_cpus(cpus: int, directory: Path | None = None, *, wait: bool = True) -> int:
    """Claim free CPUs of this host for this process; returns how many (≥ 1).

    Each CPU is an exclusive flock on `<directory>/cpu<k>.lock`, held until the process exits
    (children forked for side-by-side runs share it), so stages started at once by any tool
    (e.g. `dvc queue start -j 2`) never run more threads than the host has CPUs: a stage takes
    every CPU that is free and, when none is, waits for one (`wait=False` returns 0 instead).
    A second call in the same process returns the first claim.
    """
    if _CPU_CLAIM:
        return len(_CPU_CLAIM)
    directory = directory or worker_dir()
    directory.mkdir(parents=True, exist_ok=True)
    told = False
    while True:
        for k in range(cpus):
            handle = try_lock(directory / f"cpu{k}.lock")
            if handle is not None:
                _CPU_CLAIM.append(handle)
        if _CPU_CLAIM or not wait:
            return len(_CPU_CLAIM)
        if not told:
            print(
                f"waiting for a free CPU: all {cpus} are held by other zgain stages "
                f"({directory}; set {THREADS_ENV} to run anyway)",
                file=sys.stderr,
            )
            told = True
        time.sleep(CPU_POLL_SECONDS)


def divide_cpus_by_default(threads: int | None = None) -> None:
    """A torch stage's command line: unless the user chose (`--threads`, `ZGAIN_THREADS` or
    `ZGAIN_WORKERS`), claim the free CPUs (`claim_cpus`) and set `ZGAIN_THREADS` to their
    number for this process."""
    if threads is not None or os.environ.get(THREADS_ENV) or os.environ.get(WORKERS_ENV):
        return
    os.environ[THREADS_ENV] = str(claim_cpus(available_cpus()))


def resolve_device(spec: str | None, worker: int | None = None) -> torch.device:
    """`auto` (cuda, then mps, then cpu), `cpu`, `mps`, `cuda` or `cuda:N`; unavailable raises.

    None reads `ZGAIN_DEVICE` (default auto). With a worker slot k, `auto` on CUDA is
    `cuda:(k mod visible GPUs)`: workers take the GPUs round-robin.
    """
    spec = (spec or os.environ.get(DEVICE_ENV) or AUTO).strip()
    if not _DEVICE_PATTERN.match(spec):
        raise ParamsError(f"device: must be auto, cpu, mps, cuda or cuda:N, got {spec!r}")
    if spec == AUTO:
        if torch.cuda.is_available():
            if worker is None:
                return torch.device("cuda")
            return torch.device("cuda", worker % torch.cuda.device_count())
        if torch.backends.mps.is_available():
            return torch.device("mps")
        return torch.device("cpu")
    device = torch.device(spec)
    if device.type == "cuda":
        if not torch.cuda.is_available():
            raise ParamsError(f"device: {spec!r} was requested but CUDA is not available")
        if device.index is not None and device.index >= torch.cuda.device_count():
            raise ParamsError(
                f"device: {spec!r} was requested but only {torch.cuda.device_count()} "
                "CUDA device(s) are visible"
            )
    if device.type == "mps" and not torch.backends.mps.is_available():
        raise ParamsError(f"device: {spec!r} was requested but MPS is not available")
    return device


def resolve_threads(value: int | str | None, workers: int = 1) -> int:
    """Torch CPU threads: the value given, else `ZGAIN_THREADS`, else a fair share of the
    available CPUs among `workers` concurrent workers (at least 1)."""
    raw = value if value is not None else os.environ.get(THREADS_ENV)
    if raw is None or raw == "":
        return max(1, available_cpus() // workers)
    return positive_int("threads", raw)


def autocast_context(device: torch.device) -> contextlib.AbstractContextManager[Any]:
    """bf16 autocast on CUDA; a no-op context elsewhere."""
    if device.type == "cuda":
        return torch.autocast(device_type="cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def use_deterministic_algorithms() -> None:
    """Deterministic kernels, warning where an op has none: what
    `torch.use_deterministic_algorithms(True, warn_only=True)` sets for eager execution.

    The public function also sets torch._inductor's flag, and importing that configuration
    costs 1.4 s of start-up in every stage process (57 of them in the default DAG) for a
    compiler the project never uses; the eager flag is the call below.
    """
    torch._C._set_deterministic_algorithms(True, warn_only=True)


def setup_torch(
    seed: int, *, device: str | None = None, threads: int | None = None
) -> tuple[torch.device, RunEnvironment]:
    """Seed torch, fix its thread count, pick the device; returns it and what was used.

    Under `ZGAIN_WORKERS` it first claims this process's worker slot (see `claim_worker`).
    """
    workers = resolve_workers()
    n_threads = resolve_threads(threads, workers)
    worker = claim_worker(workers)
    torch.set_num_threads(n_threads)
    torch.manual_seed(seed)
    use_deterministic_algorithms()
    chosen = resolve_device(device, worker)
    dtype = "bfloat16" if chosen.type == "cuda" else "float32"
    host = socket.gethostname()
    return chosen, RunEnvironment(
        str(chosen),
        dtype,
        n_threads,
        torch.__version__,
        host,
        worker,
        cpu_model(),
        cpu_isa(),
    )


def resolve_engine(device: torch.device, value: str | None = None) -> Engine:
    """How a group's runs train: `value`, else `ZGAIN_ENGINE`, else "stacked" on CUDA and
    "lockstep" elsewhere; "compiled" is "stacked" with its forward under torch.compile. All
    three train the same runs (equal up to float rounding); on this project's CPUs the member
    axis alone measured no faster (docs/performance.md#the-member-axis)."""
    raw = value if value is not None else os.environ.get(ENGINE_ENV, "")
    raw = raw.strip()
    if raw == "":
        return "stacked" if device.type == "cuda" else "lockstep"
    if raw not in ENGINES:
        raise ParamsError(f"{ENGINE_ENV}: must be one of {', '.join(ENGINES)}, got {raw!r}")
    return raw  # type: ignore[return-value]


def cpu_model() -> str:
    """The CPU's model name: float kernels, and so the last bits of a result, follow it."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def cpu_isa() -> str:
    """The vector instruction sets torch's kernels and numpy's dispatch use on this CPU (after
    ATEN_CPU_CAPABILITY / NPY_DISABLE_CPU_FEATURES)."""
    from numpy._core import _multiarray_umath as umath

    found = [name for name in umath.__cpu_dispatch__ if umath.__cpu_features__.get(name)]
    numpy_isa = found[-1] if found else "baseline"
    return f"torch {torch.backends.cpu.get_cpu_capability()}, numpy {numpy_isa}"


def check_finite(step: int, terms: Mapping[str, float]) -> None:
    """Stop training at the first non-finite term, naming the step and the term."""
    for name, value in terms.items():
        if not math.isfinite(value):
            raise NonFiniteLossError(
                f"step {step}: loss term {name!r} is {value}; training stopped"
            )


class FiniteWatch:
    """Watches a run's loss terms for the first non-finite value without reading it back.

    `observe` records, on the terms' device, the first step at which each term was non-finite;
    `check` reads that record back (one transfer) and raises `NonFiniteLossError` naming the
    earliest such step and its term, as `check_finite` would have at that step. On a GPU the
    fit loop checks at log steps only, so no step waits for the host.
    """

    def __init__(self, device: torch.device) -> None:
        self.device = device
        self.names: list[str] | None = None
        self.first_step: torch.Tensor | None = None  # (K,) int64, -1 while finite
        self.first_value: torch.Tensor | None = None  # (K,) float64, the value at first_step

    def observe(self, step: int, terms: Mapping[str, torch.Tensor]) -> None:
        values = torch.stack([t.detach().to(torch.float64).reshape(()) for t in terms.values()])
        if self.names is None:
            self.names = list(terms)
            self.first_step = torch.full(values.shape, -1, dtype=torch.int64, device=values.device)
            self.first_value = torch.zeros_like(values)
        elif list(terms) != self.names:
            raise ValueError(f"terms changed between steps: {self.names} then {list(terms)}")
        new = ~torch.isfinite(values) & (self.first_step < 0)
        self.first_step = torch.where(new, step, self.first_step)
        self.first_value = torch.where(new, values, self.first_value)

    def check(self) -> None:
        if self.names is None or self.first_step is None or self.first_value is None:
            return
        steps = self.first_step.tolist()
        bad = [(s, k) for k, s in enumerate(steps) if s >= 0]
        if bad:
            step, k = min(bad)
            check_finite(step, {self.names[k]: float(self.first_value[k])})
