"""The member axis (docs/performance.md#the-member-axis): run-steps per second of M runs trained
as one stacked model against the same M runs stepped in lockstep, M = 1, 2, 4, 8, 16; the stacked
forward under `torch.compile` beside them, its compile time included; the step against its FLOP
bound; on CUDA the host syncs per train step. Default model sizes, a sampled world, fresh
weights (speed does not depend on them); every engine in one process, interleaved.

    python -m bench.members [--steps 10] [--repeats 3] [--members 1,2,4,8,16] [--compile 1,2,4,16]

Threads: ZGAIN_THREADS (default all this process may use); device: ZGAIN_DEVICE (cpu, cuda).
Writes bench/members-MACHINE.md.
"""

from __future__ import annotations

import argparse
import itertools
import os
import shutil
import tempfile
import time
import warnings
from collections import Counter
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
from zgain.cvae.stack import compiled_outputs

N_EXAMPLES = 4_096
MONITOR_EXAMPLES = 8
STUDY_BASES = 40
"""The bases of the study the projection row prices: about what Δ capture 0.05 at 80% power
needs (docs/defaults.md#the-design)."""


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
    """A call of fit_group on M members with `engine` (lockstep, stacked or compiled: the
    stacked engine with its forward under torch.compile); it returns the members' last logged
    values."""
    monitor = select(work.batch, slice(0, MONITOR_EXAMPLES))
    base_nll = work.surprisal[:MONITOR_EXAMPLES].sum(dim=1)

    def run() -> list[dict[str, float]]:
        last = fit_group(
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
        return last

    return run


def timed(call) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def count_syncs(call, steps: int) -> tuple[float, list[tuple[str, int]]]:
    """CUDA's synchronizing calls per train step over one `call` (CUDA's sync debug mode; the
    call's one validation and log step included) and the five source lines that made most."""
    torch.cuda.synchronize()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.cuda.set_sync_debug_mode("warn")
        try:
            call()
        finally:
            torch.cuda.set_sync_debug_mode(0)
    syncs = [w for w in caught if "synchroniz" in str(w.message)]
    where = Counter(f"{os.path.relpath(w.filename)}:{w.lineno}" for w in syncs)
    return len(syncs) / steps, where.most_common(5)


def max_difference(a: list[dict[str, float]], b: list[dict[str, float]]) -> float:
    """Largest |a − b| over every member's logged values."""
    return max(abs(x[k] - y[k]) for x, y in zip(a, b, strict=True) for k in x)


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


def amortized_ratio(steady: float, lockstep: float, compile_seconds: float, calls: float) -> float:
    """Speed of the compiled engine over lockstep across `calls` calls' worth of steps, its one
    compile (`compile_seconds`) included; steady and lockstep are seconds per call."""
    return lockstep * calls / (compile_seconds + steady * calls)


def parse_counts(text: str) -> list[int]:
    return [int(m) for m in text.split(",") if m.strip()]


def stage_steps() -> int:
    """Steps of a confirming run in the default params (cvae.confirm.steps, or
    cvae.common.steps when null; the workload's common steps are the benchmark's own)."""
    raw = raw_params()["cvae"]
    return raw["confirm"]["steps"] or raw["common"]["steps"]


def markdown(args, work, device, threads, seconds, cold, warm, differences, syncs, failed) -> str:
    """The results file: the member-count table, the compile notes, the syncs, the projection."""
    counts, steps = parse_counts(args.members), args.steps
    stage = stage_steps()
    calls = stage / steps

    def rate(engine: str, m: int) -> float:
        return m * steps / seconds[f"{engine} {m}"]

    lines = [
        "# The member axis: stacked runs against runs in lockstep",
        "",
        f"`python -m bench.members --steps {steps} --repeats {args.repeats} "
        f"--members {args.members} --compile {args.compile}` on {device}, {threads} threads; "
        f"default model sizes, batch {work.params.cvae.common.batch_size}; each figure the "
        f"median of {args.repeats} interleaved repeats of one fit_group call ({steps} steps, "
        "one validation of 8 examples at the end).",
        "",
        *machine(),
        "",
        "| members M | lockstep run-steps/s | stacked run-steps/s | stacked / lockstep "
        "| compiled run-steps/s | compiled / lockstep | compile s: cold, warm cache "
        f"| compiled / lockstep over a {stage}-step stage: cold, warm |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for m in counts:
        lock, stacked = rate("lockstep", m), rate("stacked", m)
        row = f"| {m} | {lock:.1f} | {stacked:.1f} | {stacked / lock:.2f} |"
        if m in cold:
            steady, base = seconds[f"compiled {m}"], seconds[f"lockstep {m}"]
            c_cold, c_warm = cold[m] - steady, warm[m] - steady
            row += (
                f" {rate('compiled', m):.1f} | {base / steady:.2f} | {c_cold:.1f}, {c_warm:.1f} |"
                f" {amortized_ratio(steady, base, c_cold, calls):.2f}, "
                f"{amortized_ratio(steady, base, c_warm, calls):.2f} |"
            )
        elif m in failed:
            row += " compile failed | – | – | – |"
        else:
            row += " – | – | – | – |"
        lines.append(row)
    lines += [
        "",
        "Compiled: the stacked engine with its forward (`Stack.outputs`, the vmapped model, and "
        "its backward through AOTAutograd) under `torch.compile` (inductor, static shapes); the "
        "loss, Adam and the weight average stay eager. Compile seconds: the first call in a "
        "fresh inductor cache less the median call (cold), and the first call after "
        "`torch._dynamo.reset()` with inductor's cache on disk kept (warm: what each stage "
        "process after the first would pay on one machine). Over a stage: the stage's steps "
        "of M runs with one compile paid.",
    ]
    for m, why in failed.items():
        lines += ["", f"The compiled engine at M = {m} failed here: {why}"]
    if differences:
        worst = max(differences.values())
        lines += [
            "",
            f"Compiled against eager stacked, the same runs: largest |Δ| of a logged value "
            f"{worst:.1e} (float rounding of the fused kernels).",
        ]
    lines += ["", sync_line(syncs, steps)]
    lines += ["", projection(work, seconds, steps, stage)]
    return "\n".join(lines) + "\n"


def sync_line(syncs, steps: int) -> str:
    if not syncs:
        return (
            "Host syncs per train step: not counted (CUDA's sync debug mode needs a CUDA device)."
        )
    parts = []
    for label, (per_step, where) in syncs.items():
        top = ", ".join(f"{place} ({n})" for place, n in where) or "none"
        parts.append(f"{label}: {per_step:.2f} a step; most from {top}")
    return (
        f"Host syncs per train step (CUDA's sync debug mode over one call of {steps} steps, its "
        "validation and log step included): " + "; ".join(parts) + "."
    )


def projection(work, seconds, steps: int, stage: int) -> str:
    """What the fastest rate measured here makes of a 40-base study's confirming training."""
    confirm = work.params.cvae.confirm
    runs = STUDY_BASES * len(confirm.variants) * len(confirm.rates) * len(confirm.seeds)
    best, label = max((int(k.rsplit(" ", 1)[1]) * steps / v, k) for k, v in seconds.items())
    minutes = runs * stage / best / 60
    return (
        f"A {STUDY_BASES}-base study of the contested group ({runs} runs × {stage} steps = "
        f"{runs * stage:,} run-steps) would train in {minutes:,.0f} min at the fastest rate "
        f"measured here ({label} members: {best:.1f} run-steps/s), one process; the bases, "
        "their surprisal and the evaluation are not in this figure."
    )


def bound_line(flops: int, peak: float, solo: float, m: int) -> str:
    bound = flops / peak
    return (
        f"One run's train step: {flops / 1e9:.2f} GFLOP (torch.utils.flop_counter, forward and "
        f"backward). This machine's float32 matmul peak, measured beside it: "
        f"{peak / 1e9:.0f} GFLOP/s, so the FLOP bound is {bound * 1e3:.1f} ms a step; the "
        f"lockstep step at M = {m} takes {solo * 1e3:.1f} ms, {bound / solo:.0%} of the bound.\n"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--members", default="1,2,4,8,16")
    parser.add_argument(
        "--compile", default="1,2,4,16", help="member counts also timed compiled ('' for none)"
    )
    args = parser.parse_args()
    counts, compiled = parse_counts(args.members), parse_counts(args.compile)
    if not set(compiled) <= set(counts):
        parser.error(f"--compile {args.compile}: every count must be one of --members")
    device = resolve_device(None)
    threads = resolve_threads(None, resolve_workers())
    torch.set_num_threads(threads)
    cache = tempfile.mkdtemp(prefix="inductor-")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = cache  # every first compile here is a cold one
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
    engines = {m: ["lockstep", "stacked"] + (["compiled"] * (m in compiled)) for m in counts}
    candidates = {f"{e} {m}": _train(work, m, e, device) for m in counts for e in engines[m]}
    cold, failed = {}, {}
    for m in compiled:  # a compile that fails here is reported, and the rest still measured
        try:
            cold[m] = timed(candidates[f"compiled {m}"])
        except Exception as error:  # noqa: BLE001 - any failure of torch.compile is the figure
            failed[m] = f"{type(error).__name__}: {(str(error).splitlines() or [''])[0][:300]}"
            print(f"compiled engine at M = {m} failed: {failed[m]}", flush=True)
            del candidates[f"compiled {m}"]
    compiled = [m for m in compiled if m not in failed]
    differences = {
        m: max_difference(candidates[f"compiled {m}"](), candidates[f"stacked {m}"]())
        for m in compiled
    }
    seconds = {k: median(v) for k, v in interleaved(candidates, args.repeats).items()}
    torch._dynamo.reset()  # the compiled graph is dropped; inductor's cache on disk is kept
    compiled_outputs.cache_clear()
    warm = {m: timed(candidates[f"compiled {m}"]) for m in compiled}
    flops, peak = step_flops(work, device), peak_flops(device)
    syncs = {}
    if device.type == "cuda":
        largest = [("stacked", counts[-1])] + [("compiled", m) for m in compiled[-1:]]
        for engine, m in largest:
            syncs[f"{engine}, M = {m}"] = count_syncs(candidates[f"{engine} {m}"], args.steps)
    shutil.rmtree(cache, ignore_errors=True)
    out = results_path("members")
    text = markdown(args, work, device, threads, seconds, cold, warm, differences, syncs, failed)
    text += "\n" + bound_line(
        flops, peak, seconds[f"lockstep {counts[0]}"] / (counts[0] * args.steps), counts[0]
    )
    out.write_text(text)
    print(text)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
