"""The stages as processes: their peak memory (issue item 5) and the DAG's own cost (item 6).

    python -m bench.bench_stages [--only memory|dag] [--repo PATH]

Memory: peak RSS of the train_cvae and evaluate stages at default params and at ¼ of the default
n_test (the default is the 4× point: an evaluate run at 4× the default n_test alone would take
about 2 minutes), each stage run as its own process on inputs prepared in a temporary directory.
Preparation (not measured): generate the world, save a freshly initialized base LM (memory does
not depend on its weights), score the surprisal tables and the normalizer with the stages' own
`run`. train_cvae runs `val_every` steps, so one validation pass and its logging are included;
its peak does not grow with further steps.

The DAG's own cost: a no-op `dvc repro` against `dvc status` and against the sum of the stages'
Python start-up (import) times; and one stage's fixed overhead (start-up + loading inputs) as a
share of a train_cvae stage's wall time. PATH must hold a completed, up-to-date run (`dvc status`
clean), e.g. of the default DAG. Without it a tiny-profile DAG is built in a temporary git
repository (the e2e tests' set-up) and measured.
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

from bench.common import (
    REPO_ROOT,
    Row,
    Section,
    group_args,
    interleaved,
    median,
    merge,
    params_with,
    peak_rss_mib,
    raw_params,
    save_fresh_base,
    screening_only,
    workload,
)
from zgain.core.runs import CONFIRM_PREFIX
from zgain.params import parse_params

# 5. Memory

GROWTH_TARGET = 0.25
"""Evaluate's peak RSS may grow by at most this share when n_test grows 4× (streaming)."""


@dataclass
class MemorySizes:
    test_factor: int = 4
    n_test: int | None = None  # the larger n_test; None: the default (then the smaller is 1/4)


def prepare(root: Path, raw: dict, base_path: Path) -> Path:
    """A project directory under root with params.yaml (one base: `screening_only`) and every
    input of train_cvae, the base at `base_path` copied in as the screening base."""
    from stages import generate, normalizer, surprisal

    raw = screening_only(raw)
    root.mkdir(parents=True)
    (root / "params.yaml").write_text(yaml.safe_dump(raw, sort_keys=False))
    cwd = Path.cwd()
    os.chdir(root)
    try:
        params = parse_params(raw)
        base = params.base.screening
        model = Path(params.paths.base(base).base_model)
        model.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(base_path, model)
        generate.run(params.data, Path(params.paths.synthetic_dir))
        surprisal.run(params, base)
        normalizer.run(params, base)
    finally:
        os.chdir(cwd)
    return root


def stage_rss(root: Path, stage: str) -> float:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "TQDM_DISABLE": "1"}
    return peak_rss_mib(f"stages.{stage}", group_args(root), cwd=str(root), env=env)


def measure_memory(raw: dict, sizes: MemorySizes) -> tuple[Section, dict[str, float]]:
    common = raw["cvae"]["common"]
    raw = merge(raw, {"cvae": {"common": {"steps": common["val_every"]}}})
    # one run per group: the peak is one process's (a group's side-by-side shares are each one)
    raw = merge(raw, {"cvae": {"rates": raw["cvae"]["rates"][:1]}})
    big = sizes.n_test or raw["data"]["n_test"]
    n_test = big // sizes.test_factor
    out: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        base_path = save_fresh_base(params_with(raw), Path(tmp) / "base.pt")
        for label, size in (("small", n_test), ("large", big)):
            scaled = merge(raw, {"data": {"n_test": size}})
            root = prepare(Path(tmp) / label, scaled, base_path)
            for stage in ("train_cvae", "evaluate"):
                out[f"{stage}_{label}"] = stage_rss(root, stage)
    growth = out["evaluate_large"] / out["evaluate_small"] - 1
    train_growth = out["train_cvae_large"] / out["train_cvae_small"] - 1
    section = Section(
        "5. Memory (peak RSS of a stage process)",
        [
            Row(
                f"train_cvae, n_test {n_test} / {big}",
                f"{out['train_cvae_small']:.0f} / {out['train_cvae_large']:.0f} MiB "
                f"({train_growth:+.0%})",
            ),
            Row(
                f"evaluate, n_test {n_test} / {big}",
                f"{out['evaluate_small']:.0f} / {out['evaluate_large']:.0f} MiB ({growth:+.0%})",
                f"≤ {GROWTH_TARGET:+.0%} for 4× n_test",
                growth <= GROWTH_TARGET,
            ),
        ],
        [
            f"Default params otherwise (n_train {raw['data']['n_train']}, evaluation K = "
            f"{raw['evaluate']['iw_samples']}, batch {raw['evaluate']['batch_size']}); "
            f"train_cvae ran {common['val_every']} steps. Peak RSS = the stage process's own VmHWM."
        ],
    )
    return section, out | {"evaluate_growth": growth}


# 6. The DAG's own cost

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
class DagSizes:
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


def measure_dag(repo: Path, sizes: DagSizes, train_step_seconds: float) -> tuple[Section, dict]:
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


def dag_section(repo: Path | None, train_step: float | None = None, common=None) -> Section:
    """Benchmark 6 on `repo` (None: a tiny-profile DAG built here). `train_step` is the trainer's
    step time (bench_train's figure) at params whose `cvae.common` is `common`; it is measured
    here, on 4096 sampled examples of `repo`'s world, when not given, when `repo`'s cvae.common
    differs, and always on a tiny DAG."""
    from bench.bench_train import Sizes as TrainSizes
    from bench.bench_train import trainer_vs_bare

    with tempfile.TemporaryDirectory() as tmp:
        target = repo or tiny_repo(Path(tmp))
        params = params_with(yaml.safe_load((target / "params.yaml").read_text()))
        if train_step is None or repo is None or params.cvae.common != common:
            trained = trainer_vs_bare(workload(params, 4096), TrainSizes(trainer_repeats=1))
            train_step = trained["trainer"]
        section, _ = measure_dag(target.resolve(), DagSizes(), train_step)
    return section


def main() -> list[Section]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=("memory", "dag"), default=None)
    parser.add_argument("--repo", type=Path, default=None, help="a completed, up-to-date run")
    args = parser.parse_args()
    sections = []
    if args.only in (None, "memory"):
        sections.append(measure_memory(raw_params(), MemorySizes())[0])
    if args.only in (None, "dag"):
        sections.append(dag_section(args.repo))
    for section in sections:
        section.print()
    return sections


if __name__ == "__main__":
    main()
