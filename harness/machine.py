"""Where a figure was measured: the machine, the commit, and wall-time records of whole commands
(bench/wall-times.json, which the README quotes through `<!-- wall-time: NAME -->` markers)."""

from __future__ import annotations

import datetime
import json
import os
import platform
import re
import subprocess
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
RECORDS = HERE.parent / "bench" / "wall-times.json"


def short_hash(revision: str = "HEAD", cwd: Path | None = None) -> str | None:
    """The short hash `revision` names in the git checkout at `cwd` (here), None if none."""
    done = subprocess.run(
        ["git", "rev-parse", "--short", revision], cwd=cwd, capture_output=True, text=True
    )
    return done.stdout.strip() if done.returncode == 0 else None


def machine() -> list[str]:
    """Lines describing where the figures were measured, and the commit they were measured on."""
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


def duration(seconds: float) -> str:
    """Whole seconds as README writes them: '45 s', '12 min 3 s', '1 h 2 min 3 s'."""
    total = int(round(seconds))
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours} h {minutes} min {secs} s"
    return f"{minutes} min {secs} s" if minutes else f"{secs} s"


def read_records(path: Path = RECORDS) -> dict[str, dict]:
    return json.loads(path.read_text()) if path.exists() else {}


def record(
    name: str,
    command: str,
    seconds: float,
    *,
    cwd: Path | None = None,
    note: str | None = None,
    out: Path = RECORDS,
) -> None:
    """Write (or replace) the record NAME: the command, its seconds, the commit of the checkout
    at `cwd` (here) it ran in, the CPUs and when it finished."""
    records = read_records(out)
    records[name] = {
        "seconds": round(seconds, 1),
        "command": command,
        "commit": short_hash(cwd=cwd) or "unknown",
        "cpus": len(os.sched_getaffinity(0)),
        "finished": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        **({"note": note} if note else {}),
    }
    out.write_text(json.dumps(records, indent=2, sort_keys=True) + "\n")
