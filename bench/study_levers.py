"""The study bench's levers that are not a train step: where a one-run stage process's seconds
go (its start-up, the work, the evaluation's metrics and writes), and stacked members' linear
layers against one linear per member (docs/performance.md#the-study-engine-runs-per-hour).

A stage process is timed whole by the caller, while a prelude wraps the library functions that
do its work in timers and writes their totals as JSON when the process exits; whatever the
wrapped functions do not cover is the stage's fixed cost (imports, loading, building).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from bench.timing import Row, interleaved, median
from bench.workload import REPO_ROOT, Workload, group_args

WORK = {
    "train_cvae": [("zgain.cvae.fit", "fit_group")],
    "evaluate": [
        ("zgain.evaluate.scoring", "evaluate_examples"),
        ("zgain.evaluate.run_metrics", "run_metrics"),
        ("zgain.evaluate.run_metrics", "evaluation_table"),
        ("zgain.core.io", "write_table"),
        ("zgain.core.io", "write_json"),
    ],
}
"""Per stage, the library functions (module, name) that do a run's work; the stages import
them by name, so a prelude that replaces them before the stage's import times every call."""


def stage(root: Path, module: str, threads: int, prelude: str = "") -> None:
    """Run stage `module` for the screening group (VARIANT, seed 0) in `root` as its own
    process; `prelude` is Python run first in that process (a lever's patch; forked members
    inherit it)."""
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "ZGAIN_THREADS": str(threads)}
    # alter_sys: the stage is __main__ in sys.modules, so its forked members can find its task
    main = f"runpy.run_module('stages.{module}', run_name='__main__', alter_sys=True)"
    run = f"{prelude}\nimport runpy\n{main}"
    args = [sys.executable, "-c", run, *group_args(root)]
    done = subprocess.run(args, cwd=root, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{module} in {root} failed: {done.stderr[-2000:]}")


def timing_prelude(module: str, out: Path) -> str:
    """Python that wraps stage `module`'s work functions (`WORK`) in timers and writes their
    seconds, by function name, to `out` as JSON when the process exits."""
    lines = [
        "import atexit, importlib, json, time",
        "seconds = {}",
        "def timed(module, name):",
        "    owner = importlib.import_module(module)",
        "    work = getattr(owner, name)",
        "    def timer(*args, **kwargs):",
        "        start = time.perf_counter()",
        "        try:",
        "            return work(*args, **kwargs)",
        "        finally:",
        "            seconds[name] = seconds.get(name, 0.0) + time.perf_counter() - start",
        "    setattr(owner, name, timer)",
        *(f"timed({owner!r}, {name!r})" for owner, name in WORK[module]),
        f"atexit.register(lambda: open({str(out)!r}, 'w').write(json.dumps(seconds)))",
    ]
    return "\n".join(lines)


def stage_breakdown(root: Path, module: str, threads: int) -> dict[str, float]:
    """Seconds of one stage process in `root`: "wall" (the process, start to exit), each work
    function's total (`WORK`) and "fixed", the wall outside them."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "seconds.json"
        start = time.perf_counter()
        stage(root, module, threads, timing_prelude(module, out))
        wall = time.perf_counter() - start
        seconds = json.loads(out.read_text())
    missing = {name for _, name in WORK[module]} - set(seconds)
    if missing:
        raise RuntimeError(f"{module} in {root} never called {sorted(missing)}")
    return {**seconds, "wall": wall, "fixed": wall - sum(seconds.values())}


def per_member_linear(
    xs: list[Tensor], weights: list[Tensor], biases: list[Tensor]
) -> list[Tensor]:
    """Each member's linear layer on its own input: x (rows, in) -> (rows, out) per member."""
    return [F.linear(x, w, b) for x, w, b in zip(xs, weights, biases, strict=True)]


def stacked_linear(x: Tensor, weight: Tensor, bias: Tensor) -> Tensor:
    """Every member's linear layer as one batched matmul over a member axis: x (M, rows, in),
    weight (M, out, in), bias (M, out) -> (M, rows, out)."""
    return torch.baddbmm(bias[:, None, :], x, weight.transpose(1, 2))


def stacked_linears_ms(work: Workload, members: int, threads: int, repeats: int = 30) -> dict:
    """Milliseconds for the forward and backward of every linear layer of the decoder (at its
    shapes in a train step: batch × decoder length rows), for `members` members: one linear per
    member (each with its own tensors), and stacked (one batched matmul per layer over a member
    axis)."""
    torch.manual_seed(0)
    linears = [m for m in work.cvae().decoder.modules() if isinstance(m, nn.Linear)]
    rows = work.params.cvae.common.batch_size * work.batch.decoder_input.shape[1]

    def leaves(*shape: int) -> Tensor:
        return torch.randn(shape, requires_grad=True)

    apart, stacked = [], []
    for linear in linears:
        d_in, d_out = linear.in_features, linear.out_features
        stacked.append(
            (leaves(members, rows, d_in), leaves(members, d_out, d_in), leaves(members, d_out))
        )
        apart.append(
            [(leaves(rows, d_in), leaves(d_out, d_in), leaves(d_out)) for _ in range(members)]
        )
    grads = [torch.randn(members, rows, linear.out_features) for linear in linears]

    def one_per_member() -> None:
        for layer, grad in zip(apart, grads, strict=True):
            outputs = per_member_linear(*(list(t) for t in zip(*layer, strict=True)))
            for output, member_grad in zip(outputs, grad, strict=True):
                output.backward(member_grad)

    def one_batched_matmul() -> None:
        for (x, weight, bias), grad in zip(stacked, grads, strict=True):
            stacked_linear(x, weight, bias).backward(grad)

    torch.set_num_threads(threads)
    candidates = {"one per member": one_per_member, "stacked": one_batched_matmul}
    times = interleaved(candidates, repeats, 3)
    return {name: 1e3 * median(t) for name, t in times.items()}


def start_up_rows(
    breakdown: dict[str, dict[str, float]], one_run_seconds: float, n_runs: int
) -> list[Row]:
    """Where a one-run stage process's seconds go, and what one start-up per group saves."""
    train, evaluate = breakdown["train_cvae"], breakdown["evaluate"]
    metrics = evaluate["run_metrics"] + evaluate["evaluation_table"]
    writes = evaluate["write_table"] + evaluate["write_json"]
    fixed = train["fixed"] + evaluate["fixed"]
    saved = (n_runs - 1) * fixed
    return [
        Row(
            "one-run train_cvae process (s): start-up (imports, loading, models) and the "
            "checkpoint's write; training",
            f"{train['fixed']:.1f}; {train['fit_group']:.1f} (of {train['wall']:.1f})",
        ),
        Row(
            "one-run evaluate process (s): start-up (imports, loading); scoring (decoding); "
            "metrics (probes, MI estimator, table); writes",
            f"{evaluate['fixed']:.1f}; {evaluate['evaluate_examples']:.1f}; {metrics:.1f}; "
            f"{writes:.2f} (of {evaluate['wall']:.1f})",
        ),
        Row(
            f"one start-up per group: the {n_runs - 1} one-run train_cvae and evaluate "
            f"start-ups a group of {n_runs} does not pay",
            f"{saved:.1f} s, {saved / one_run_seconds:.0%} of the one-run stages' time",
        ),
    ]
