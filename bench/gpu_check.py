"""The GPU check `bench/gpu.sh` runs: the tiny DAG on CUDA, one default-size group, host syncs.

    python -m bench.gpu_check [--out PATH]   (default: bench/gpu_check-MACHINE.md)

1. The tiny profile's stages, in this process, on the GPU (the DAG's code paths on CUDA).
2. One default-size group (every target rate of one variant and seed) as whole stage
   processes, timed: runs per hour and ms per run-step, on a sampled world with a fresh base.
3. Host syncs per train step: CUDA's sync debug mode counts the synchronizing calls of 50
   steps of the fit loop (the loop reads back at log steps only; the target is 0 between).
"""

from __future__ import annotations

import os

os.environ.setdefault("TQDM_DISABLE", "1")

import argparse  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import torch  # noqa: E402
import yaml  # noqa: E402

from bench import common as wl  # noqa: E402
from bench.bench_memory import prepare  # noqa: E402
from bench.common import machine, results_path  # noqa: E402
from zgain.cvae.fit import fit_cvae  # noqa: E402

SYNC_STEPS = 50


def tiny_dag(root: Path, device: str = "cuda") -> float:
    """Seconds for every stage of the tiny profile, in this process, on `device`: each base's
    upstream stages, the screening groups on the first base, the confirming groups on the
    others, and the report."""
    from stages import evaluate, generate, normalizer, report, surprisal, train_base, train_cvae
    from zgain.params import parse_params

    raw = wl.raw_params(yaml.safe_load((wl.REPO_ROOT / "tests" / "tiny_profile.yaml").read_text()))
    raw["paths"] = {key: str(root / value) for key, value in raw["paths"].items()}
    params = parse_params(raw)
    start = time.perf_counter()
    generate.run(params.data, Path(params.paths.synthetic_dir))
    for base in params.base.seeds:
        train_base.run(params, base, device=device)
        surprisal.run(params, base, device=device)
        normalizer.run(params, base)
    groups = [
        (params.base.screening, variant, seed)
        for variant in params.cvae.variants
        for seed in params.cvae.seeds
    ]
    confirm = params.cvae.confirm
    groups += [(base, None, seed) for base in confirm.bases for seed in confirm.seeds]
    for base, variant, seed in groups:
        train_cvae.run(params, base, variant, seed, device=device)
        evaluate.run(params, base, variant, seed, device=device)
    report.run(params)
    return time.perf_counter() - start


def stage(root: Path, module: str, threads: int) -> None:
    """Run stage `module` for the screening group (common.VARIANT, seed 0) in `root` as its own
    process, as `dvc repro` would."""
    env = {**os.environ, "PYTHONPATH": str(wl.REPO_ROOT), "ZGAIN_THREADS": str(threads)}
    # alter_sys: the stage is __main__ in sys.modules, so its forked members can find its task
    main = f"import runpy; runpy.run_module('stages.{module}', run_name='__main__', alter_sys=True)"
    args = [sys.executable, "-c", main, *wl.group_args(root)]
    done = subprocess.run(args, cwd=root, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{module} in {root} failed: {done.stderr[-2000:]}")


def group_seconds(raw: dict, root: Path) -> dict[str, float]:
    base_path = wl.save_fresh_base(wl.params_with(raw), root / "base.pt")
    project = prepare(root / "group", raw, base_path)
    threads = len(os.sched_getaffinity(0))
    start = time.perf_counter()
    stage(project, "train_cvae", threads)
    trained = time.perf_counter()
    stage(project, "evaluate", threads)
    return {"train": trained - start, "evaluate": time.perf_counter() - trained}


def syncs_per_step(raw: dict) -> float:
    common = raw["cvae"]["common"]
    short = {
        "steps": SYNC_STEPS,  # every warm-up must fit inside the run (check_params)
        "warmup_steps": min(common["warmup_steps"], SYNC_STEPS),
        "lr_warmup_steps": min(common["lr_warmup_steps"], SYNC_STEPS),
        "rate_target": {"warmup_steps": min(common["rate_target"]["warmup_steps"], SYNC_STEPS)},
    }
    params = wl.params_with(wl.merge(raw, {"cvae": {"common": short}}))
    work = wl.workload(params, 4096)
    monitor = work.batch
    base = work.surprisal.sum(dim=1).double()
    torch.cuda.set_sync_debug_mode("warn")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit_cvae(
            work.cvae(), work.batch, work.surprisal, monitor, base, work.objective(),
            seed=0, max_x_len=work.max_x_len, device=torch.device("cuda"),
            log=lambda step, values: None,
        )  # fmt: skip
    torch.cuda.set_sync_debug_mode(0)
    syncs = [w for w in caught if "synchroniz" in str(w.message)]
    return len(syncs) / SYNC_STEPS


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None, help="bench/gpu_check-MACHINE.md")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("bench.gpu_check needs a CUDA device")
    args.out = args.out or results_path("gpu_check")
    raw = wl.raw_params()
    with tempfile.TemporaryDirectory() as tmp:
        tiny = tiny_dag(Path(tmp) / "tiny")
        group = group_seconds(raw, Path(tmp))
    syncs = syncs_per_step(raw)
    n_runs = len(raw["cvae"]["rates"])
    steps = raw["cvae"]["common"]["steps"]
    total = group["train"] + group["evaluate"]
    lines = [
        "# GPU check",
        "",
        "Generated by `bash bench/gpu.sh`; do not edit by hand.",
        "",
        f"- device: {torch.cuda.get_device_name(0)}",
        *machine(),
        "",
        "| figure | measured |",
        "|---|---|",
        f"| tiny DAG, every stage in one process on CUDA | {tiny:.1f} s |",
        f"| one default group ({wl.VARIANT}, {n_runs} rates): train, evaluate | "
        f"{group['train']:.1f} s, {group['evaluate']:.1f} s |",
        f"| runs per hour at the defaults (one group) | {3600 * n_runs / total:.0f} |",
        f"| ms per run-step (train stage wall ÷ steps ÷ runs, start-up included) | "
        f"{1e3 * group['train'] / steps / n_runs:.1f} |",
        f"| host syncs per train step (CUDA sync debug mode, {SYNC_STEPS} steps, log and "
        f"validation steps included) | {syncs:.2f} |",
    ]
    args.out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
