"""Same base: what a code change does to the study's conclusions, with the base held fixed.

    python -m studies.same_base.same_base [--then 0e6281d] [--scratch DIR]
        [--out studies/same_base/same-base-results.md]

Every run of the study starts from one base, and the base's training is chaotic: reordered float
sums, or another CPU's kernels, give another base, which moves every run together
(docs/usage.md#what-is-and-is-not-reproducible). So today's default run against an earlier
report mixes three effects: the code's on the CVAE runs, another base, and this machine. This
separates them, on this machine:

1. `then`: a clone at `THEN` runs its own whole default DAG (`dvc repro`), its own code and base;
2. `today`: a clone of HEAD takes `then`'s base as its `train_base` output (`dvc commit`) and
   runs every later stage of its default DAG (`dvc repro`);
3. per-rate tables are put against seed intervals, as `zgain check` does: `then` against
   `THEN`'s committed report (same code, this machine), `today` against `then` (same base and
   machine, today's code), and HEAD's committed report against both.

Both clones live under --scratch and every step is a `dvc repro`, so a second call with the same
--scratch only redoes the comparison. The results file (generated, with the wall time) gives the
counts per rate, every metric outside in the same-base comparison, and the headline captures.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
import yaml

from harness.machine import machine
from harness.offline import REPO_ROOT
from zgain.cli.check import (
    TABLES,
    Verdict,
    committed_confidence,
    committed_tables,
    committed_text,
    compare_tables,
    fresh_tables,
)
from zgain.report.render.markdown import markdown_table

THEN = "0e6281d"
"""The last report before the decoder's last block worked on the kept rows only (b4a0446), the
change that gave the base other float rounding."""

RESULTS = Path(__file__).with_name("same-base-results.md")
BASE_FILES = ("models/base.pt", "models/base.json", "dvclive/base")
"""THEN's base files (one base, before base.seeds)."""
TODAY_BASE_FILES = ("models/bases/0/base.pt", "models/bases/0/base.json", "dvclive/bases/0")
"""Where today's first base keeps the same files (docs/architecture.md#bases)."""
TODAY_BASE_OUT = "models/bases/0"  # the train_base@0 output dvc.lock records
HEADLINE = "decomposition_rate1.0.csv"


def md5(path: Path) -> str:
    return hashlib.md5(path.read_bytes()).hexdigest()


def md5_at(revision: str, path: str) -> str:
    """The md5 `revision`'s dvc.lock records for the output `path`."""
    lock = yaml.safe_load(committed_text(REPO_ROOT, "dvc.lock", revision) or "{}")
    for stage in lock.get("stages", {}).values():
        for out in stage.get("outs", []):
            if out["path"] == path:
                return out["md5"]
    return "none recorded"


def tree_env(tree: Path) -> dict[str, str]:
    """Import `stages` and `zgain` from `tree`; dvc from this interpreter's environment; threads
    as `make repro` chooses them."""
    bin_dir = str(Path(sys.executable).parent)
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(tree), str(tree / "src")]),
        "PATH": os.pathsep.join([bin_dir, os.environ["PATH"]]),
        "TQDM_DISABLE": "1",
    }


def run(args: list[str], tree: Path) -> None:
    print(f"[{tree.name}] {' '.join(args)}", flush=True)
    subprocess.run(args, cwd=tree, env=tree_env(tree), check=True)


def clone(tree: Path, revision: str) -> str:
    """A clone of this repository at `revision` (kept if there); its short commit."""
    if not tree.exists():
        subprocess.run(["git", "clone", "-q", str(REPO_ROOT), str(tree)], check=True)
        subprocess.run(["git", "-C", str(tree), "checkout", "-q", revision], check=True)
    done = subprocess.run(
        ["git", "-C", str(tree), "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def adopt_base(today: Path, then: Path, dvc: str) -> None:
    """`then`'s base files become `today`'s first base's train_base outputs (unless they
    already are)."""
    run([dvc, "repro", "generate"], today)
    mine, theirs = today / TODAY_BASE_FILES[0], then / BASE_FILES[0]
    if mine.exists() and md5(mine) == md5(theirs):
        return
    for source, target in zip(BASE_FILES, TODAY_BASE_FILES, strict=True):
        (today / target).parent.mkdir(parents=True, exist_ok=True)
        if (then / source).is_dir():
            shutil.copytree(then / source, today / target, dirs_exist_ok=True)
        else:
            shutil.copy2(then / source, today / target)
    run([dvc, "commit", "-f", "train_base@0"], today)


def first_minutes(scratch: Path, minutes: float) -> float:
    """The minutes of the call that ran both DAGs: recorded in --scratch by the first call and
    read back by later ones, whose `dvc repro` had nothing to do."""
    record = scratch / "minutes.json"
    if not record.exists():
        record.write_text(json.dumps({"minutes": minutes}))
    return json.loads(record.read_text())["minutes"]


def counts(found: list[Verdict]) -> dict[str, str]:
    """'inside/total' per table, and over all of them with the count expected if each run were
    another draw of the other's seeds (`zgain.cli.check.inside_probability`)."""
    by_table: dict[str, list[int]] = {}
    for verdict in found:
        cell = by_table.setdefault(verdict.table, [0, 0])
        cell[0] += verdict.inside
        cell[1] += 1
    cells = {table: f"{inside}/{total}" for table, (inside, total) in by_table.items()}
    inside, expected = sum(v.inside for v in found), sum(v.expected for v in found)
    return cells | {"all": f"{inside}/{len(found)} (expected {expected:.1f})"}


def ranking(text: str) -> str:
    """Each variant's capture adjusted to the rate, best first."""
    frame = pd.read_csv(io.StringIO(text))
    rows = frame[(frame.metric == "capture") & frame.adjusted_mean.notna()]
    capture = dict(zip(rows.variant, rows.adjusted_mean, strict=True))
    order = sorted(capture, key=capture.__getitem__, reverse=True)
    return ", ".join(f"{v} {capture[v]:.3f}" for v in order)


def count_table(rows: dict[str, dict[str, str]]) -> str:
    names = sorted({name for cells in rows.values() for name in cells} - {"all"})
    columns = ["tables against intervals", *[n[len("decomposition_") : -4] for n in names], "all"]
    body = [[label, *[cells.get(n, "—") for n in [*names, "all"]]] for label, cells in rows.items()]
    return markdown_table(columns, body)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--then", default=THEN, help="the earlier report's commit")
    parser.add_argument("--scratch", type=Path, help="where the two clones go (kept; reused)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    start, where = time.perf_counter(), machine()
    scratch = (args.scratch or Path(tempfile.mkdtemp(prefix="same-base-"))).resolve()
    then_tree, today_tree = scratch / "then", scratch / "today"
    then, today = clone(then_tree, args.then), clone(today_tree, "HEAD")
    dvc = str(Path(sys.executable).parent / "dvc")
    run([dvc, "repro"], then_tree)
    adopt_base(today_tree, then_tree, dvc)
    run([dvc, "repro"], today_tree)
    minutes = first_minutes(scratch, (time.perf_counter() - start) / 60)

    here_then, here_today = (
        fresh_tables(then_tree / "reports"),
        fresh_tables(today_tree / "reports"),
    )
    names = sorted(here_then)
    folder = f"reports/{TABLES}"
    committed_then = committed_tables(REPO_ROOT, folder, names, then)
    committed_today = committed_tables(REPO_ROOT, folder, names, today)
    confidence = committed_confidence(REPO_ROOT, then)
    if committed_confidence(REPO_ROOT, today) != confidence:
        raise SystemExit(f"error: {then} and {today} differ in report.confidence")

    def against(fresh: dict[str, str], reference: dict[str, str]) -> dict[str, str]:
        return counts(compare_tables(fresh, reference, confidence))

    same_base = compare_tables(here_today, here_then, confidence)
    rows = {
        f"{then} here vs {then} committed (same code, this machine)": against(
            here_then, committed_then
        ),
        f"{today} on {then}'s base vs {then} here (same base, this machine)": counts(same_base),
        f"{today} on {then}'s base vs {then} committed": against(here_today, committed_then),
        f"{today} committed vs {then} committed": against(committed_today, committed_then),
        f"{today} committed vs {then} here (same machine, own bases)": against(
            committed_today, here_then
        ),
    }
    outside = [v.line() for v in same_base if not v.inside]
    lines = [
        "# Same base",
        "",
        f"Generated by `python -m studies.same_base.same_base --then {args.then}` on {today} "
        f"({minutes:.1f} min when both clones' `dvc repro` ran; a second call on the same "
        "--scratch only compares); do not edit by hand.",
        "",
        *where,
        "",
        f"- Bases (md5 of models/base.pt): {then} committed "
        f"{md5_at(then, 'models/base.pt')}; {then} here {md5(then_tree / BASE_FILES[0])}; "
        f"{today} committed {TODAY_BASE_OUT} {md5_at(today, TODAY_BASE_OUT)}.",
        "- Headline capture at C = 1.0 adjusted to C, best first:",
        f"  - {then} committed: {ranking(committed_then[HEADLINE])}",
        f"  - {then} here: {ranking(here_then[HEADLINE])}",
        f"  - {today} on {then}'s base: {ranking(here_today[HEADLINE])}",
        f"  - {today} committed: {ranking(committed_today[HEADLINE])}",
        "",
        "Per-rate metrics (variant × metric) whose seed mean lies inside the other run's "
        f"{confidence:.0%} seed interval, as `zgain check` counts them; *expected*: the count if "
        "the first run were another draw of the second's seed distribution (normal seed values; "
        "`zgain.cli.check.inside_probability`).",
        "",
        count_table(rows),
        "",
        f"Outside with the same base ({today} on {then}'s base vs {then} here): "
        + ("; ".join(outside) if outside else "none")
        + ".",
        "",
    ]
    args.out.write_text("\n".join(lines))
    print(args.out.read_text())


if __name__ == "__main__":
    main()
