"""The DAG's own cost (issue item 6): a no-op `dvc repro` against `dvc status` and against the
sum of the stages' Python start-up (import) times; and one stage's fixed overhead (start-up +
loading inputs) as a share of a train_cvae stage's wall time.

    python -m bench.bench_dag [--repo PATH]

PATH must hold a completed, up-to-date run (`dvc status` clean), e.g. of the default DAG. Without
it a tiny-profile DAG is built in a temporary git repository (the e2e tests' set-up) and measured.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import yaml

from bench.common import REPO_ROOT, Row, Section, interleaved, median, raw_params
from zgain.core.runs import CONFIRM_PREFIX

BIN = Path(sys.executable).parent
TINY_PROFILE = REPO_ROOT / "tests" / "tiny_profile.yaml"
LOAD_INPUTS = """
import json, sys, time
start = time.perf_counter()
import stages.train_cvae as stage
imported = time.perf_counter()
from zgain.base.frozen import load_frozen
from zgain.base.model import load_base
from zgain.cvae.model import CVAE
from zgain.params import load_params
from zgain.world.packed import load_packed
from zgain.world.synthetic import World
params = load_params()
world = World.from_params(params.data)
train_split, train = load_packed(params.paths.synthetic_dir, "train", world)
val_split, val = load_packed(params.paths.synthetic_dir, "val", world)
screening = params.paths.base(params.base.screening)
load_frozen(screening, train_split, world.n_targets)
load_frozen(screening, val_split, world.n_targets)
CVAE(load_base(screening.base_model), params.cvae.common.model)
print(json.dumps({"import": imported - start, "load": time.perf_counter() - imported}))
"""


@dataclass
class Sizes:
    repeats: int = 3
    warmup: int = 1


def env_for(repo: Path) -> dict[str, str]:
    return {
        **os.environ,
        "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": os.pathsep.join([str(repo), str(repo / "src")]),
        "DVC_NO_ANALYTICS": "1",
        "TQDM_DISABLE": "1",
        "GIT_AUTHOR_NAME": "zgain",
        "GIT_AUTHOR_EMAIL": "zgain@localhost",
        "GIT_COMMITTER_NAME": "zgain",
        "GIT_COMMITTER_EMAIL": "zgain@localhost",
    }


def sh(repo: Path, *args: str) -> str:
    done = subprocess.run(args, cwd=repo, env=env_for(repo), capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed ({done.returncode}):\n{done.stderr}")
    return done.stdout + done.stderr


def new_project(root: Path, params: str, dvc_yaml: str, lock: str | None = None) -> Path:
    """A git + dvc project at `root` of this checkout's `stages/` and `src/`, with the given
    params.yaml, dvc.yaml and (when given) dvc.lock texts, committed once."""
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
    for name in ("stages", "src"):
        shutil.copytree(REPO_ROOT / name, root / name, ignore=ignore)
    (root / "params.yaml").write_text(params)
    (root / "dvc.yaml").write_text(dvc_yaml)
    if lock is not None:
        (root / "dvc.lock").write_text(lock)
    sh(root, "git", "init", "-q")
    sh(root, "dvc", "init", "-q")
    shutil.copy(REPO_ROOT / ".dvc" / "config", root / ".dvc" / "config")
    sh(root, "git", "add", "-A")
    sh(root, "git", "commit", "-qm", "project")
    return root


def tiny_repo(root: Path) -> Path:
    """A git + dvc repository of this project on the tiny profile, reproduced once."""
    from bench.common import merge

    raw = merge(raw_params(), yaml.safe_load(TINY_PROFILE.read_text()))
    params = yaml.safe_dump(raw, sort_keys=False)
    new_project(root, params, (REPO_ROOT / "dvc.yaml").read_text())
    sh(root, "dvc", "repro")
    return root


def stage_modules(repo: Path) -> Counter:
    """How many DAG stages (matrix entries expanded) run each `stages.<module>` (a confirming
    group's stages run their screening twin's module)."""
    listing = sh(repo, "dvc", "stage", "list", "--name-only").split()
    return Counter(re.sub(r"@.*$", "", name).removeprefix(CONFIRM_PREFIX) for name in listing)


def import_seconds(repo: Path, module: str) -> float:
    start = time.perf_counter()
    sh(repo, sys.executable, "-c", f"import stages.{module}")
    return time.perf_counter() - start


def measure(repo: Path, sizes: Sizes, train_step_seconds: float) -> tuple[Section, dict]:
    status = sh(repo, "dvc", "status", "--json")
    if json.loads(status[status.index("{") :]) != {}:
        raise RuntimeError(f"{repo}: dvc status is not clean, a no-op repro cannot be timed")
    modules = stage_modules(repo)
    candidates = {
        "status": lambda: sh(repo, "dvc", "status"),
        "repro": lambda: sh(repo, "dvc", "repro"),
        **{m: (lambda m=m: import_seconds(repo, m)) for m in modules},
    }
    times = {
        name: median(t) for name, t in interleaved(candidates, sizes.repeats, sizes.warmup).items()
    }
    imports = sum(times[m] * count for m, count in modules.items())
    loads = [json.loads(sh(repo, sys.executable, "-c", LOAD_INPUTS)) for _ in range(sizes.repeats)]
    startup = times["train_cvae"]
    load = median([x["load"] for x in loads])
    raw = yaml.safe_load((repo / "params.yaml").read_text())
    steps = raw["cvae"]["common"]["steps"]
    loop = steps * train_step_seconds
    share = (startup + load) / (startup + load + loop)
    wall = f"of {startup + load + loop:.0f} s: {steps} steps × {1e3 * train_step_seconds:.0f} ms"
    n_stages = sum(modules.values())
    section = Section(
        f"6. The DAG's own cost ({n_stages} stages, {repo.name})",
        [
            Row("no-op `dvc repro`", f"{times['repro']:.2f} s"),
            Row("`dvc status`", f"{times['status']:.2f} s"),
            Row("no-op repro ÷ status", f"{times['repro'] / times['status']:.2f}×"),
            Row(f"sum of the {n_stages} stages' start-up (process + imports)", f"{imports:.1f} s"),
            Row("no-op repro ÷ that sum", f"{times['repro'] / imports:.2f}"),
            Row("train_cvae start-up + input loading", f"{startup:.2f} + {load:.2f} s"),
            Row("share of a train_cvae stage's wall time", f"{share:.1%} ({wall})"),
        ],
        [
            f"Median of {sizes.repeats} interleaved repeats. Start-up is the wall time of "
            "`python -c 'import stages.<module>'`; input loading is train_cvae's reading of "
            "the train/val splits, both surprisal tables and the base checkpoint. The stage's "
            "wall time = start-up + loading + steps × the trainer's step time (bench 2)."
        ],
    )
    return section, {**times, "imports": imports, "startup": startup, "load": load, "share": share}


def main(sizes: Sizes | None = None, repo: Path | None = None) -> list[Section]:
    from bench.bench_train import Sizes as TrainSizes
    from bench.bench_train import trainer_vs_bare
    from bench.common import params_with, workload

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, default=repo)
    args, _ = parser.parse_known_args()
    sizes = sizes or Sizes()
    with tempfile.TemporaryDirectory() as tmp:
        target = args.repo or tiny_repo(Path(tmp))
        params = params_with(yaml.safe_load((target / "params.yaml").read_text()))
        step = trainer_vs_bare(workload(params, 4096), TrainSizes(trainer_repeats=1))["trainer"]
        section, _ = measure(target.resolve(), sizes, step)
    section.print()
    return [section]


if __name__ == "__main__":
    main()
