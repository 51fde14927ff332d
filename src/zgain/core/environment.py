"""Where and how torch runs: device, threads, autocast, seeding, finiteness checks.

Device and thread count change speed, not results, so they are not experiment params: they
come from the environment (`ZGAIN_DEVICE`, `ZGAIN_THREADS`) or a stage's `--device` /
`--threads` options, and every run records what it actually used (`RunEnvironment`).
"""

from __future__ import annotations

import contextlib
import math
import os
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Annotated, Any

import torch
import typer

from zgain.core.errors import NonFiniteLossError, ParamsError

DEVICE_ENV = "ZGAIN_DEVICE"
THREADS_ENV = "ZGAIN_THREADS"
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

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def available_cpus() -> int:
    """CPUs this process may run on (its affinity mask, so a queue worker's share counts)."""
    return len(os.sched_getaffinity(0))


def resolve_device(spec: str | None) -> torch.device:
    """`auto` (cuda, then mps, then cpu), `cpu`, `mps`, `cuda` or `cuda:N`; unavailable raises.

    None reads `ZGAIN_DEVICE` (default auto).
    """
    spec = (spec or os.environ.get(DEVICE_ENV) or AUTO).strip()
    if not _DEVICE_PATTERN.match(spec):
        raise ParamsError(f"device: must be auto, cpu, mps, cuda or cuda:N, got {spec!r}")
    if spec == AUTO:
        if torch.cuda.is_available():
            return torch.device("cuda")
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


def resolve_threads(value: int | str | None) -> int:
    """Torch CPU threads: the value given, else `ZGAIN_THREADS`, else every available CPU."""
    raw = value if value is not None else os.environ.get(THREADS_ENV)
    if raw is None or raw == "":
        return available_cpus()
    try:
        threads = int(raw)
    except ValueError:
        raise ParamsError(f"threads: must be a positive integer, got {raw!r}") from None
    if threads < 1:
        raise ParamsError(f"threads: must be a positive integer, got {raw!r}")
    return threads


def autocast_context(device: torch.device) -> contextlib.AbstractContextManager[Any]:
    """bf16 autocast on CUDA; a no-op context elsewhere."""
    if device.type == "cuda":
        return torch.autocast(device_type="cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def setup_torch(
    seed: int, *, device: str | None = None, threads: int | None = None
) -> tuple[torch.device, RunEnvironment]:
    """Seed torch, fix its thread count, pick the device; returns it and what was used."""
    n_threads = resolve_threads(threads)
    torch.set_num_threads(n_threads)
    torch.manual_seed(seed)
    torch.use_deterministic_algorithms(True, warn_only=True)
    chosen = resolve_device(device)
    dtype = "bfloat16" if chosen.type == "cuda" else "float32"
    return chosen, RunEnvironment(str(chosen), dtype, n_threads, torch.__version__)


def check_finite(step: int, terms: Mapping[str, float]) -> None:
    """Stop training at the first non-finite term, naming the step and the term."""
    for name, value in terms.items():
        if not math.isfinite(value):
            raise NonFiniteLossError(
                f"step {step}: loss term {name!r} is {value}; training stopped"
            )
