"""DVC's own time around one stage against the size of `dvc.lock` (docs/architecture.md).

    python -m bench.bench_dvc_lock [--before REV] [--today REV] [--repeats R]

DVC reads `dvc.lock` when it collects the stages and reads and rewrites it after each stage it
runs, so its time around a stage grows with the lock. Each candidate is a git + dvc project of
this working tree's `stages/`, `src/` and `params.yaml`, with the `dvc.yaml` and `dvc.lock` of
one revision: `--before` (each group stage listing its library files, plus whatever stale
entries that lock held), the same lock with the entries of stages no longer in its `dvc.yaml`
removed, and `--today` (the group stages depending on one code digest each). The stage timed is
`check_params`, which needs no data: `dvc repro -f -s check_params` against its bare command,
interleaved, median of the repeats. No data, no run outputs and no training are needed.
"""

from __future__ import annotations

import argparse
import io
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml
from ruamel.yaml import YAML

from bench.bench_dag import new_project, sh
from bench.timing import Row, Section, interleaved, median, write_results
from bench.wall_time import short_hash
from bench.workload import REPO_ROOT

STAGE = "check_params"


def at_revision(revision: str, path: str) -> str:
    done = subprocess.run(
        ["git", "show", f"{revision}:{path}"], cwd=REPO_ROOT, capture_output=True, text=True
    )
    if done.returncode != 0:
        raise SystemExit(f"error: git show {revision}:{path} failed: {done.stderr.strip()}")
    return done.stdout


def project(root: Path, dvc_yaml: str, lock: str) -> Path:
    """A git + dvc project of today's code and params with the given dvc.yaml and dvc.lock."""
    return new_project(root, (REPO_ROOT / "params.yaml").read_text(), dvc_yaml, lock)


def revision_hash(revision: str) -> str:
    """`revision` (a name such as HEAD, or a hash) as the short hash it names today."""
    found = short_hash(revision, REPO_ROOT)
    if found is None:
        raise SystemExit(f"error: {revision!r} names no revision of {REPO_ROOT}")
    return found


def pruned(root: Path, lock: str) -> str:
    """`lock` without the entries of stages that the project's dvc.yaml no longer resolves."""
    names = set(sh(root, "dvc", "stage", "list", "--name-only").split())
    rt = YAML()
    data = rt.load(lock)
    for name in [n for n in data["stages"] if n not in names]:
        del data["stages"][name]
    out = io.StringIO()
    rt.dump(data, out)
    return out.getvalue()


def lock_figures(lock: str) -> str:
    stages = yaml.load(lock, Loader=yaml.CSafeLoader)["stages"]
    deps = sum(len(s.get("deps", [])) for s in stages.values())
    return f"{len(lock) / 1024:.0f} KiB, {len(stages)} entries, {deps} deps"


def measure(before: str, today: str, repeats: int) -> Section:
    with tempfile.TemporaryDirectory() as tmp:
        old_yaml, old_lock = at_revision(before, "dvc.yaml"), at_revision(before, "dvc.lock")
        roots = {"before": project(Path(tmp) / "before", old_yaml, old_lock)}
        roots["before, stale entries removed"] = project(
            Path(tmp) / "pruned", old_yaml, pruned(roots["before"], old_lock)
        )
        roots["today"] = project(
            Path(tmp) / "today", at_revision(today, "dvc.yaml"), at_revision(today, "dvc.lock")
        )
        locks = {name: (root / "dvc.lock").read_text() for name, root in roots.items()}
        bare = [sys.executable, "-m", f"stages.{STAGE}"]
        candidates = {
            f"{name}: dvc repro": (lambda r=root: sh(r, "dvc", "repro", "-f", "-s", STAGE))
            for name, root in roots.items()
        }
        candidates["bare stage"] = lambda: sh(roots["today"], *bare)
        times = {k: median(v) for k, v in interleaved(candidates, repeats, warmup=1).items()}
    stage_seconds = times["bare stage"]
    overhead = {name: times[f"{name}: dvc repro"] - stage_seconds for name in roots}
    rows = [Row(f"`python -m stages.{STAGE}` alone", f"{stage_seconds:.2f} s")]
    for name in roots:
        gain = "" if name == "before" else f" ({overhead['before'] / overhead[name]:.1f}× less)"
        rows.append(
            Row(
                f"{name}: dvc.lock; DVC's time around the stage",
                f"{lock_figures(locks[name])}; {overhead[name]:.2f} s{gain}",
            )
        )
    return Section(
        f"DVC's time around one stage (`dvc repro -f -s {STAGE}` minus the bare stage)",
        rows,
        [
            f"before: dvc.yaml and dvc.lock of `{before}`; today: of `{today}`; code and "
            f"params of this working tree. Interleaved, median of {repeats} after one warm-up. "
            "A full `dvc repro` collects the stages once and then, around each stage, reads "
            "and rewrites the lock, so most of this cost recurs per stage.",
        ],
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default="1baf018", help="a revision before code digests")
    parser.add_argument("--today", default="HEAD")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "dvc-results.md")
    args = parser.parse_args()
    start = time.perf_counter()
    section = measure(revision_hash(args.before), revision_hash(args.today), args.repeats)
    minutes = (time.perf_counter() - start) / 60
    write_results(args.out, "DVC's time around a stage", "bench.bench_dvc_lock", minutes, section)


if __name__ == "__main__":
    main()
