"""The worlds study: the default's contested variants over bases on worlds that move where the
strategy information and the decoys sit, and on the default world under a weaker base
(mismatch).

    python -m studies.worlds.worlds REPO

REPO is a clone with a completed default run (`make repro`): its report is the `default` world.
Each other world of WORLDS is then one `dvc exp run` in REPO with the world's knobs
(docs/method.md#world-knobs) and the study's design (DESIGN: 4 bases, C = 1.0, the screening
tier on one seed, the default's confirming tier on the other three bases, the fewest on which
the rule can decide), timed; its report and
params.yaml are kept in OUT/<world>/ (examples/keep_report.sh), its wall time is recorded in
bench/wall-times.json (`dvc exp run world <name>`), and REPO's params.yaml and dvc.lock are
restored before the next. Last, `zgain worlds-report` lays the verdicts over bases side by side
in OUT (docs/usage.md#several-worlds).
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

import yaml

from harness.machine import record

BASES = 4  # the screening base and three confirming ones: the rule decides on ≥ 3 replicates


def design(bases: int) -> tuple[str, ...]:
    """The `-S` settings of a study on `bases` bases: C = 1.0, the screening tier (every
    variant) on base 0 with one seed, the confirming tier (cvae.confirm.variants, the default's
    contested variants) on the others."""
    others = ",".join(map(str, range(1, bases)))
    return (
        f"base.seeds=[0,{others}]",
        "cvae.seeds=[0]",
        "cvae.rates=[1.0]",
        f"cvae.confirm.bases=[{others}]",
        "cvae.confirm.rates=[1.0]",
    )


DESIGN = design(BASES)
OUT = Path("reports/examples/worlds")  # of this repository (examples/keep_report.sh)
WORLDS = {
    # the strategies share a 2-token prefix: the evidence starts at the third target token
    "late": ("data.prefix=2",),
    # the same, and the shared prefix is noisy: high surprisal where z has nothing to carry
    "decoys": ("data.prefix=2", "data.decoy_positions=[0,1]", "data.decoy_noise=0.5"),
    # the default world with a deliberately weaker base: 300 steps instead of early stopping,
    # so b_t departs from b*_t (tables/mismatch.csv) where the world is hardest to learn
    "weak": ("base.max_steps=300",),
}


def apply_settings(raw: dict, settings: tuple[str, ...]) -> dict:
    """raw params with each `a.b.c=value` of settings set, as `dvc exp run -S` sets them."""
    for setting in settings:
        dotted, value = setting.split("=", 1)
        *parents, last = dotted.split(".")
        node = raw
        for key in parents:
            node = node[key]
        node[last] = yaml.safe_load(value)
    return raw


def copy_report(repo: Path, name: str) -> None:
    """REPO's report and params.yaml into reports/examples/worlds/<name>/ of this repository,
    replacing what was there, its links to docs/ pointing from where it sits
    (examples/keep_report.sh)."""
    subprocess.run(["bash", "examples/keep_report.sh", str(repo), f"worlds/{name}"], check=True)


def timed_exp_run(
    repo: Path, exp_args: list[str], keep_as: str, record_name: str, shown: str, note: str
) -> float:
    """`dvc exp run EXP_ARGS` in REPO with REPO's own dvc and python (as `make repro` runs
    them), timed; its report kept in reports/examples/KEEP_AS/ (examples/keep_report.sh), the
    time recorded under RECORD_NAME, and REPO's params.yaml and dvc.lock restored. The seconds."""
    bin_dir = repo.resolve() / ".venv" / "bin"
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    start = time.perf_counter()
    subprocess.run([str(bin_dir / "dvc"), "exp", "run", *exp_args], cwd=repo, check=True, env=env)
    seconds = time.perf_counter() - start
    subprocess.run(["bash", "examples/keep_report.sh", str(repo), keep_as], check=True)
    record(record_name, shown, seconds, cwd=repo, note=note)
    subprocess.run(["git", "checkout", "--", "params.yaml", "dvc.lock"], cwd=repo, check=True)
    return seconds


def run_world(repo: Path, name: str, knobs: tuple[str, ...]) -> float:
    """One world's `dvc exp run` in REPO, its report copied to OUT/name; the seconds it took."""
    exp_args = ["-n", f"world-{name}"]
    for setting in (*DESIGN, *knobs):
        exp_args += ["-S", setting]
    return timed_exp_run(
        repo,
        exp_args,
        f"worlds/{name}",
        f"dvc exp run world {name}",
        shlex.join(["dvc", "exp", "run", *exp_args]),
        f"in a clone with the default run done; the report is {OUT / name}/",
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo", type=Path, help="a clone with a completed default run")
    parser.add_argument("--worlds", nargs="*", default=list(WORLDS), choices=list(WORLDS))
    args = parser.parse_args()
    copy_report(args.repo, "default")
    for name in args.worlds:
        seconds = run_world(args.repo, name, WORLDS[name])
        print(f"world {name}: {seconds:.0f} s", flush=True)
    folders = [str(OUT / name) for name in ("default", *WORLDS)]
    view = [sys.executable, "-m", "zgain.cli.app", "worlds-report", "--out", str(OUT), *folders]
    subprocess.run(view, check=True)


if __name__ == "__main__":
    main()
