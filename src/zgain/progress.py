"""`dvc repro` with overall progress: "stage k of n" and roughly how long is left.

    python -m zgain.progress [DVC REPRO OPTION ...]        (`make repro-progress`)

Before it starts `dvc repro`, it asks DVC which stages are changed and counts them with every
stage downstream of them: the n stages this run will execute (a rerun whose outputs come out
byte-identical can let DVC skip some of those, so n is an upper bound). It then passes DVC's
output through unchanged and, at each stage DVC starts, prints one line:

    zgain: stage 12 of 73 (train_cvae@0-token_sum-0), 14 min elapsed, about 31 min left

The time left is each remaining stage's expected time: the mean of the stages of its kind
(`train_cvae`, `evaluate`, …: the name before `@`) already run in this run, else the mean of its
kind in the last run on this checkout (`.dvc/tmp/zgain-stage-times.json`, written as stages
finish). Where a kind has neither, the line says "at least" and names the kinds it has no time
for. A stage's time is from DVC starting it to DVC starting the next, DVC's own work included.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

TIMES_FILE = Path(".dvc/tmp/zgain-stage-times.json")
RECORDS_FILE = Path("bench/wall-times.json")  # whole-run wall times (bench/wall_time.py)
_EVENT = re.compile(
    r"^(?:Running stage '(?P<run>[^']+)':"
    r"|Stage '(?P<cached>[^']+)' is cached - skipping run"
    r"|Stage '(?P<skip>[^']+)' didn't change, skipping)"
)


def event(line: str) -> tuple[str, str] | None:
    """("run" | "cached" | "skip", stage) for a line where DVC starts or skips a stage."""
    found = _EVENT.match(line.strip())
    if not found:
        return None
    kind = next(k for k in ("run", "cached", "skip") if found[k])
    return kind, found[kind]


def kind_of(stage: str) -> str:
    """A stage's kind: its name before `@` (`train_cvae@0-token_sum-0` → `train_cvae`)."""
    return stage.split("@", 1)[0]


def plan(changed: Iterable[str], dependents: Mapping[str, Iterable[str]]) -> set[str]:
    """The changed stages and every stage downstream of them (dependents: stage → the stages
    that depend on it directly)."""
    todo, out = list(changed), set()
    while todo:
        stage = todo.pop()
        if stage not in out:
            out.add(stage)
            todo.extend(dependents.get(stage, ()))
    return out


def time_left(
    remaining: Sequence[str], seen: Mapping[str, Sequence[float]], prior: Mapping[str, float]
) -> tuple[float, list[str]]:
    """Seconds the remaining stages should take, and the kinds with no time to go by.

    Each stage takes the mean time of its kind in this run (`seen`, seconds per stage), else
    its kind's mean in the last run (`prior`); a stage of a kind in neither adds nothing.
    """
    total, unknown = 0.0, []
    for stage in remaining:
        kind = kind_of(stage)
        if seen.get(kind):
            total += sum(seen[kind]) / len(seen[kind])
        elif kind in prior:
            total += prior[kind]
        elif kind not in unknown:
            unknown.append(kind)
    return total, unknown


def minutes(seconds: float) -> str:
    """'under 1 min', '14 min', '1 h 5 min' (rounded to the minute: an estimate)."""
    whole = round(seconds / 60)
    if whole < 1:
        return "under 1 min"
    hours, mins = divmod(whole, 60)
    return f"{hours} h {mins} min" if hours else f"{mins} min"


def progress_line(
    k: int, n: int, stage: str, elapsed: float, left: float, unknown: Sequence[str]
) -> str:
    """The line printed when stage k of n starts."""
    head = f"zgain: stage {k} of {n} ({stage}), {minutes(elapsed)} elapsed"
    estimate = minutes(left)
    if not estimate[0].isdigit():  # under 1 min: "about" adds nothing
        estimate = f"{estimate} left"
    else:
        estimate = f"{'at least' if unknown else 'about'} {estimate} left"
    if unknown:
        return f"{head}, {estimate} (no time yet for {', '.join(unknown)})"
    return f"{head}, {estimate}"


def kind_means(seen: Mapping[str, Sequence[float]]) -> dict[str, float]:
    return {kind: sum(times) / len(times) for kind, times in seen.items() if times}


def read_prior(path: Path = TIMES_FILE) -> dict[str, float]:
    try:
        return {str(k): float(v) for k, v in json.loads(path.read_text()).items()}
    except (OSError, ValueError, AttributeError):
        return {}


def recorded_run(path: Path = RECORDS_FILE) -> str | None:
    """The recorded wall time of the default study's `make repro`, as a reference line."""
    try:
        record = json.loads(path.read_text())["make repro"]
        seconds, cpus, commit = float(record["seconds"]), record["cpus"], record["commit"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    mins, secs = divmod(round(seconds), 60)
    return (
        f"zgain: the default study's recorded `make repro` took {mins} min {secs} s on {cpus} "
        f"CPUs at {commit} ({path})"
    )


def stages_to_run(force: bool) -> list[str]:
    """The stages a whole-pipeline `dvc repro` will execute here: the changed ones (every
    one when forced) and everything downstream of them."""
    from dvc.repo import Repo

    repo = Repo(".")
    try:
        graph = repo.index.graph  # edges point from a stage to the stages it depends on
        dependents: dict[str, list[str]] = {}
        for stage, upstream in graph.edges:
            dependents.setdefault(upstream.addressing, []).append(stage.addressing)
        every = [stage.addressing for stage in graph.nodes]
        changed = every if force else list(repo.status())
    finally:
        repo.close()
    return sorted(plan(changed, dependents))


def main(argv: Sequence[str]) -> int:
    """Run `dvc repro ARGV` over the whole pipeline and print progress; dvc's exit status."""
    if any(not a.startswith("-") for a in argv):
        print("zgain: progress covers the whole pipeline: give dvc repro options only")
        return 2
    todo = set(stages_to_run(force=bool({"-f", "--force"} & set(argv))))
    prior = read_prior()
    if reference := recorded_run():
        print(reference, flush=True)
    print(f"zgain: {len(todo)} stages to run", flush=True)
    started = time.monotonic()
    seen: dict[str, list[float]] = {}
    done: set[str] = set()
    current: tuple[str, float] | None = None
    with subprocess.Popen(
        [sys.executable, "-m", "dvc", "repro", *argv],
        stdout=subprocess.PIPE,
        text=True,
        errors="replace",
        bufsize=1,
    ) as dvc:
        assert dvc.stdout is not None
        for line in dvc.stdout:
            sys.stdout.write(line)
            found = event(line)
            if found is None:
                continue
            now = time.monotonic()
            if current is not None:
                seen.setdefault(kind_of(current[0]), []).append(now - current[1])
                _save(prior | kind_means(seen))
                current = None
            kind, stage = found
            if kind == "skip":
                continue
            done.add(stage)
            current = (stage, now)
            remaining = sorted((todo - done) | {stage})
            left, unknown = time_left(remaining, seen, prior)
            line = progress_line(len(done), len(todo | done), stage, now - started, left, unknown)
            print(line, flush=True)
        code = dvc.wait()
    if current is not None and code == 0:
        seen.setdefault(kind_of(current[0]), []).append(time.monotonic() - current[1])
        _save(prior | kind_means(seen))
    print(f"zgain: {len(done)} stages in {minutes(time.monotonic() - started)}", flush=True)
    return code


def _save(means: Mapping[str, float], path: Path = TIMES_FILE) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(dict(sorted(means.items())), indent=2) + "\n")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
