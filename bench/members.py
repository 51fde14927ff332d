"""The member axis (docs/performance.md#the-member-axis): run-steps per second of M runs trained
as one stacked model against the same M runs stepped in lockstep, M = 1, 4, 8, 16; the step
against its FLOP bound. Default model sizes, a sampled world, fresh weights (speed does not
depend on them); both engines in one process, interleaved.

    python -m bench.members [--steps 10] [--repeats 3] [--members 1,4,8,16]

Threads: ZGAIN_THREADS (default all this process may use); device: ZGAIN_DEVICE (cpu, cuda).
Writes bench/members-MACHINE.md.
"""

from __future__ import annotations

import argparse
import itertools
import time
from dataclasses import replace

import torch
from torch.utils.flop_counter import FlopCounterMode

from bench.common import (
    interleaved,
    machine,
    median,
    params_with,
    raw_params,
    results_path,
    workload,
)
from zgain.core.environment import resolve_device, resolve_threads, resolve_workers
from zgain.core.sequences import select
from zgain.cvae.fit import fit_group
from zgain.cvae.member import ReaderFeatures, batch_loss
from zgain.cvae.model import CVAE

N_EXAMPLES = 4_096
MONITOR_EXAMPLES = 8


def _group(work, members: int):
    """M (model, objective, log) of the default grid's variants x rates, seed 0."""
    cvae = work.params.cvae
    grid = itertools.cycle(itertools.product(cvae.variants, cvae.rates))
    runs = []
    for variant, rate in itertools.islice(grid, members):
        objective = replace(work.objective(variant), rate=rate)
        torch.manual_seed(0)
        runs.append((CVAE(work.base, objective.variant.model), objective, lambda s, v: None))
    return runs


def _train(work, members: int, engine: str, device: torch.device):
    monitor = select(work.batch, slice(0, MONITOR_EXAMPLES))
    base_nll = work.surprisal[:MONITOR_EXAMPLES].sum(dim=1)

    def run() -> None:
        fit_group(
            _group(work, members),
            work.batch,
            work.surprisal,
            monitor,
            base_nll,
            seed=0,
            max_x_len=work.max_x_len,
            device=device,
            engine=engine,
        )
        if device.type == "cuda":
            torch.cuda.synchronize()

    return run


def step_flops(work, device: torch.device) -> int:
    """FLOPs of one run's training step (forward and backward, torch's flop counter)."""
    ((model, objective, _),) = _group(work, 1)
    model.to(device).train()
    part = select(work.batch, slice(0, work.params.cvae.common.batch_size)).to(device)
    counter = FlopCounterMode(display=False)
    with counter:
        terms, _ = batch_loss(
            model,
            part,
            work.surprisal[: part.targets.shape[0]].to(device),
            objective,
            0.01,
            max_x_len=work.max_x_len,
            generator=None,
            features=ReaderFeatures.of(model, part),
        )
        terms.total.backward()
    return counter.get_total_flops()


def peak_flops(device: torch.device, size: int = 2048, repeats: int = 5) -> float:
    """float32 FLOP/s of a large square matmul here: the machine's practical peak."""
    a = torch.randn(size, size, device=device)
    b = torch.randn(size, size, device=device)
    times = []
    for _ in range(repeats + 1):
        start = time.perf_counter()
        a @ b
        if device.type == "cuda":
            torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
    return 2 * size**3 / median(times[1:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--members", default="1,4,8,16")
    args = parser.parse_args()
    device = resolve_device(None)
    threads = resolve_threads(None, resolve_workers())
    torch.set_num_threads(threads)
    raw = raw_params()
    common = {
        "steps": args.steps,
        "log_every": args.steps,
        "val_every": args.steps,
        "val_examples": MONITOR_EXAMPLES,
        "warmup_steps": 0,
        "lr_warmup_steps": 0,
        "rate_target": {"penalty_from": 0.0},
    }
    work = workload(params_with(raw, cvae={"common": common}), N_EXAMPLES)
    counts = [int(m) for m in args.members.split(",")]
    candidates = {
        f"{engine} {m}": _train(work, m, engine, device)
        for m in counts
        for engine in ("lockstep", "stacked")
    }
    seconds = {k: median(v) for k, v in interleaved(candidates, args.repeats).items()}
    flops, peak = step_flops(work, device), peak_flops(device)
    lines = [
        "# The member axis: stacked runs against runs in lockstep",
        "",
        f"`python -m bench.members --steps {args.steps} --repeats {args.repeats} "
        f"--members {args.members}` on {device}, {threads} threads; default model sizes, "
        f"batch {work.params.cvae.common.batch_size}; each figure the median of "
        f"{args.repeats} interleaved repeats of one fit_group call ({args.steps} steps, "
        "one validation of 8 examples at the end).",
        "",
        *machine(),
        "",
        "| members M | lockstep run-steps/s | stacked run-steps/s | stacked / lockstep |",
        "|---:|---:|---:|---:|",
    ]
    for m in counts:
        lock = m * args.steps / seconds[f"lockstep {m}"]
        stacked = m * args.steps / seconds[f"stacked {m}"]
        lines.append(f"| {m} | {lock:.1f} | {stacked:.1f} | {stacked / lock:.2f} |")
    solo = seconds[f"lockstep {counts[0]}"] / (counts[0] * args.steps)
    bound = flops / peak
    lines += [
        "",
        f"One run's train step: {flops / 1e9:.2f} GFLOP (torch.utils.flop_counter, forward and "
        f"backward). This machine's float32 matmul peak, measured beside it: "
        f"{peak / 1e9:.0f} GFLOP/s, so the FLOP bound is {bound * 1e3:.1f} ms a step; the "
        f"lockstep step at M = {counts[0]} takes {solo * 1e3:.1f} ms, "
        f"{bound / solo:.0%} of the bound.",
    ]
    out = results_path("members")
    out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
