"""The study engine against the code it replaced: runs per hour of the one-run stages as they
were before the engine (the tree of commit `THEN`, run from a copy of it) against today's
grouped and one-run stages, on the model both can train, at today's grid.

    python -m bench.bench_then [--steps N] [--repeats R] [--out bench/then-results.md]

`bench.bench_study` times today's model, which the earlier code cannot build (the memory slots
for z came after the engine), so its baseline patches today's step back to the earlier forms.
Here the baseline is the earlier code itself: its stages, data files, fit loop and evaluation,
one process per (variant, rate, seed) as `dvc repro` ran them. Both sides train the model of
that time (z enters as an embedding offset only: `z_memory: false`, the last iterate saved),
every rate of one variant and seed, today's steps a run; their checkpoints are checked to hold
the same parameters (names and shapes). Stages as whole processes, interleaved, median of the
repeats.
"""

from __future__ import annotations

import os

os.environ.setdefault("TQDM_DISABLE", "1")

import io  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tarfile  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from functools import partial  # noqa: E402
from pathlib import Path  # noqa: E402

import torch  # noqa: E402
import yaml  # noqa: E402

from bench.bench_memory import prepare  # noqa: E402
from bench.study_levers import stage  # noqa: E402
from bench.timing import Row, Section, interleaved, median, results_main  # noqa: E402
from bench.workload import REPO_ROOT, VARIANT, merge, params_with, raw_params, save_fresh_base  # noqa: E402
from zgain.core.environment import available_cpus  # noqa: E402

THEN = "e4d5c88"
"""The last commit before the study engine: its train_cvae and evaluate stages ran one
(variant, rate, seed) per process."""

TARGET = 1.8
"""Runs per hour of today's grouped stages over the one-run stages of `THEN`."""

SAME_MODEL = {"cvae": {"common": {"model": {"z_memory": False}, "weight_average": 0.0}}}
"""Today's params for the model `THEN` trains: z as an embedding offset only, the last iterate."""

THEN_PREPARE = """
import sys, torch, yaml
from pathlib import Path
from bench.bench_memory import prepare
from zgain.base.model import BaseLM, save_base
from zgain.params import parse_params
from zgain.world.synthetic import World
raw, root = yaml.safe_load(Path(sys.argv[1]).read_text()), Path(sys.argv[2])
params = parse_params(raw)
world = World.from_params(params.data)
torch.manual_seed(0)
base = root.with_name(root.name + "-base.pt")
save_base(base, BaseLM(params.base.model, world.vocab, world.max_len))
prepare(root, raw, base)
"""
"""Run in `THEN`'s tree: a project at argv[2] from the params file argv[1], with a freshly
initialized base (costs do not depend on the weights), as that tree's own bench prepared one."""


def extract(commit: str, dest: Path) -> Path:
    """The files of `commit` (this repository's history) under dest; a clear error without it."""
    done = subprocess.run(
        ["git", "archive", "--format=tar", commit], cwd=REPO_ROOT, capture_output=True
    )
    if done.returncode != 0:
        raise RuntimeError(
            f"commit {commit} is not in this clone's history (a full clone has it): "
            f"{done.stderr.decode().strip()}"
        )
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(done.stdout)) as archive:
        archive.extractall(dest, filter="data")
    return dest


def tree_env(tree: Path, threads: int) -> dict[str, str]:
    """A process environment that imports `stages`, `bench` and `zgain` from `tree` (ahead of
    the installed package) and runs torch on `threads` threads."""
    path = os.pathsep.join([str(tree), str(tree / "src")])
    return {**os.environ, "PYTHONPATH": path, "ZGAIN_THREADS": str(threads), "TQDM_DISABLE": "1"}


def imported_from(tree: Path) -> Path:
    """Where a process with `tree_env(tree)` imports zgain from (the check that the earlier code,
    not today's installed package, is what runs)."""
    code = "import zgain; print(zgain.__file__)"
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=tree_env(tree, 1),
        cwd=tree,
        capture_output=True,
        text=True,
        check=True,
    )
    return Path(done.stdout.strip())


def then_raw(tree: Path, rate: float, steps: int) -> dict:
    """`tree`'s params.yaml for its one-run stage of (`VARIANT`, rate, seed 0) at `steps`."""
    raw = yaml.safe_load((tree / "params.yaml").read_text())
    return merge(raw, {"cvae": {"rates": [rate], "seeds": [0], "common": {"steps": steps}}})


def prepare_then(tree: Path, root: Path, raw: dict) -> Path:
    """A project of `tree`'s code at root, with every input of its train_cvae."""
    params_file = root.with_name(root.name + "-params.yaml")
    params_file.write_text(yaml.safe_dump(raw, sort_keys=False))
    args = [sys.executable, "-c", THEN_PREPARE, str(params_file), str(root)]
    done = subprocess.run(args, cwd=tree, env=tree_env(tree, 1), capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"preparing {root} with {tree} failed: {done.stderr[-2000:]}")
    return root


def then_stage(tree: Path, root: Path, module: str, rate: float, threads: int) -> None:
    """Stage `module` of `tree`'s code for (`VARIANT`, rate, seed 0) in root, its own process."""
    args = ["--variant", VARIANT, "--rate", str(rate), "--seed", "0"]
    done = subprocess.run(
        [sys.executable, "-m", f"stages.{module}", *args],
        cwd=root,
        env=tree_env(tree, threads),
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{module} of {tree} in {root} failed: {done.stderr[-2000:]}")


def parameter_shapes(root: Path) -> list[dict[str, tuple[int, ...]]]:
    """Each checkpoint's trained parameters under root/models/cvae: name -> shape."""
    found = sorted((root / "models" / "cvae").rglob("*.pt"))
    out = []
    for path in found:
        payload = torch.load(path, map_location="cpu", weights_only=False)
        out.append({name: tuple(t.shape) for name, t in payload["state_dict"].items()})
    return out


def same_model(roots: list[Path], expected: int) -> tuple[int, int]:
    """(parameter count, checkpoints) when every checkpoint under `roots` holds the same names
    and shapes and there are `expected` of them; a RuntimeError naming the difference otherwise."""
    shapes = [one for root in roots for one in parameter_shapes(root)]
    if len(shapes) != expected:
        raise RuntimeError(f"{len(shapes)} checkpoints, expected {expected}")
    first = shapes[0]
    for other in shapes[1:]:
        if other != first:
            differ = sorted(set(first.items()) ^ set(other.items()))
            raise RuntimeError(f"the two codes trained different models: {differ[:6]}")
    return sum(torch.Size(shape).numel() for shape in first.values()), len(shapes)


def per_repeat(seconds: list[float], repeats: int) -> list[float]:
    """Totals of consecutive equal chunks: one per repeat of calls appended in repeat order."""
    if repeats < 1 or len(seconds) % repeats:
        raise ValueError(f"{len(seconds)} timings do not split into {repeats} repeats")
    chunk = len(seconds) // repeats
    return [sum(seconds[k * chunk : (k + 1) * chunk]) for k in range(repeats)]


def study_seconds(
    tree: Path, steps: int, repeats: int, threads: int, tmp: Path
) -> tuple[dict[str, float], dict[str, dict[str, float]], tuple[int, int]]:
    """Median seconds to train and evaluate every rate of one group in each layout; the median
    seconds of each stage module within them; the trained model's parameter count and
    checkpoint count (the same model on every side)."""
    raw = merge(raw_params(), merge(SAME_MODEL, {"cvae": {"common": {"steps": steps}}}))
    rates = raw["cvae"]["rates"]
    base_path = save_fresh_base(params_with(raw), tmp / "base.pt")
    grouped = prepare(tmp / "grouped", raw, base_path)
    solo = [
        prepare(tmp / f"solo{k}", merge(raw, {"cvae": {"rates": [r]}}), base_path)
        for k, r in enumerate(rates)
    ]
    then = [
        prepare_then(tree, tmp / f"then{k}", then_raw(tree, r, steps)) for k, r in enumerate(rates)
    ]
    parts: dict[str, dict[str, list[float]]] = {}

    def timed(layout: str, module: str, work: Callable[[], None]) -> None:
        start = time.perf_counter()
        work()
        spent = parts.setdefault(layout, {}).setdefault(module, [])
        spent.append(time.perf_counter() - start)

    def one_run_then() -> None:
        for root, rate in zip(then, rates, strict=True):
            for module in ("train_cvae", "evaluate"):
                timed("then", module, partial(then_stage, tree, root, module, rate, threads))

    def one_run_today() -> None:
        for root in solo:
            for module in ("train_cvae", "evaluate"):
                timed("one-run", module, partial(stage, root, module, threads))

    def grouped_today() -> None:
        for module in ("train_cvae", "evaluate"):
            timed("grouped", module, partial(stage, grouped, module, threads))

    times = interleaved(
        {
            f"one-run stages of {THEN}": one_run_then,
            "one-run stages, today": one_run_today,
            "grouped stages, today": grouped_today,
        },
        repeats,
        0,
    )
    model = same_model([grouped, *solo, *then], 3 * len(rates))
    # per stage module: the median over repeats of its total seconds in one layout's repeat
    per_stage = {
        layout: {module: median(per_repeat(spent, repeats)) for module, spent in modules.items()}
        for layout, modules in parts.items()
    }
    return {name: median(t) for name, t in times.items()}, per_stage, model


def measure(steps: int, repeats: int) -> Section:
    threads = available_cpus()
    with tempfile.TemporaryDirectory() as tmp:
        tree = extract(THEN, Path(tmp) / "then")
        where = imported_from(tree)
        if not where.is_relative_to(tree):
            raise RuntimeError(f"the earlier stages would import zgain from {where}, not {tree}")
        study, per_stage, (n_params, n_checkpoints) = study_seconds(
            tree, steps, repeats, threads, Path(tmp)
        )
    n_runs = len(raw_params()["cvae"]["rates"])
    names = {
        f"one-run stages of {THEN}": "then",
        "one-run stages, today": "one-run",
        "grouped stages, today": "grouped",
    }
    per_hour = {name: 3600 * n_runs / seconds for name, seconds in study.items()}
    rows = []
    for name, layout in names.items():
        modules = per_stage[layout]
        rows.append(
            Row(
                f"runs per hour, {name}",
                f"{per_hour[name]:.0f} ({study[name]:.1f} s for {n_runs} runs: train_cvae "
                f"{modules['train_cvae']:.1f} s, evaluate {modules['evaluate']:.1f} s)",
            )
        )
    then, one_run, grouped = (per_hour[name] for name in names)
    rows += [
        Row(
            f"grouped stages today ÷ one-run stages of {THEN} (the engine's gain)",
            f"{grouped / then:.2f}×",
            f"≥ {TARGET}×",
            grouped / then >= TARGET,
        ),
        Row("grouped ÷ one-run stages, both today (grouping alone)", f"{grouped / one_run:.2f}×"),
        Row(
            f"one-run stages today ÷ one-run stages of {THEN} (the step and the stages' own costs)",
            f"{one_run / then:.2f}×",
        ),
        Row(
            "the model every side trained",
            f"{n_params} parameters, the same names and shapes in all {n_checkpoints} checkpoints",
        ),
    ]
    return Section(
        f"The engine against the code before it ({steps} steps a run, {n_runs} rates a group, "
        f"{threads} CPUs)",
        rows,
        [
            f"Stages as whole processes, interleaved, median of {repeats}; variant {VARIANT}, "
            "seed 0, every default rate. The one-run stages of "
            f"{THEN} run from a copy of that commit's tree on its own params and data files; "
            "today's run the model of that time (z_memory false, the last iterate), default "
            "params otherwise.",
        ],
    )


def main() -> None:
    results_main(
        __doc__,
        Path(__file__).parent / "then-results.md",
        3,
        "The study engine against the code before it",
        "bench.bench_then",
        measure,
    )


if __name__ == "__main__":
    main()
