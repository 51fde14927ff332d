"""Wall time of one whole command (`make repro`, `make test`, a `dvc exp run`), recorded.

    python -m bench.wall_time [--out PATH] NAME -- COMMAND [ARG ...]

Runs COMMAND here, and when it succeeds writes its wall time under NAME in
bench/wall-times.json (replacing an earlier record of NAME), with the command, the commit,
the CPUs and when it finished. The README quotes these records through a marker,
`<!-- wall-time: NAME -->12 min 3 s`, and tests/test_docs.py holds every quote equal to its
record, so no duration there is typed by hand.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

RECORDS = Path(__file__).with_name("wall-times.json")


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


def short_hash(revision: str = "HEAD", cwd: Path | None = None) -> str | None:
    """The short hash `revision` names in the git checkout at `cwd` (here), None if none."""
    done = subprocess.run(
        ["git", "rev-parse", "--short", revision], cwd=cwd, capture_output=True, text=True
    )
    return done.stdout.strip() if done.returncode == 0 else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("name", help="the record's name, e.g. 'make repro'")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- then the command")
    parser.add_argument("--out", type=Path, default=RECORDS)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command after --")
    start = time.perf_counter()
    code = subprocess.call(command)
    seconds = time.perf_counter() - start
    if code != 0:
        sys.exit(f"error: {shlex.join(command)} exited with {code}; nothing recorded")
    record(args.name, shlex.join(command), seconds, out=args.out)
    print(f"{args.name}: {duration(seconds)} ({args.out})")


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


if __name__ == "__main__":
    main()
