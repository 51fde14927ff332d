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
import shlex
import subprocess
import sys
import time
from pathlib import Path

from harness.machine import RECORDS, duration, read_records, record  # noqa: F401


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


if __name__ == "__main__":
    main()
