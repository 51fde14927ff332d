"""Cost growth (issue item 4): training step time against batch size and target length T,
evaluation time against K and n_test, generation time against n; each with its fitted
log-log exponent (expected ≈ 1 for n, K and batch size).

    python -m bench.bench_scaling
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from bench.bench_evaluate import evaluate, scoring_model
from bench.bench_train import StepLoop, index_batches
from bench.common import (
    Row,
    Section,
    Workload,
    interleaved,
    loglog_slope,
    median,
    params_with,
    raw_params,
    run_alone,
    workload,
)
from zgain.world.splits import sample_table
from zgain.world.synthetic import World, sample


@dataclass
class Sizes:
    batch_sizes: Sequence[int] = (32, 64, 128, 256)
    length_max: Sequence[int] = (3, 6, 12, 24)  # x and y lengths; T = max_y_len + 1 (EOS)
    train_examples: int = 8192
    steps: int = 10
    iw_samples: Sequence[int] = (32, 64, 128, 256)
    k_examples: int = 32
    n_test: Sequence[int] = (32, 64, 128, 256)
    n_test_k: int = 64
    generate_n: Sequence[int] = (12_500, 25_000, 50_000, 100_000)
    repeats: int = 3
    exponents: dict[str, float] = field(default_factory=dict)


def sweep(make: Callable[[int], Callable[[], object]], xs: Sequence[int], repeats: int) -> list:
    """Median seconds at each size, all sizes interleaved within every repeat."""
    times = interleaved({x: make(x) for x in xs}, repeats)
    return [median(times[x]) for x in xs]


def train_loop(work: Workload, batch_size: int, steps: int) -> StepLoop:
    batches = index_batches(work.batch.targets.shape[0], batch_size, steps)
    return StepLoop(work, batches, online=False)


def length_workloads(raw: dict, sizes: Sizes) -> dict[int, Workload]:
    out = {}
    for length in sizes.length_max:
        params = params_with(raw, data={"length_max": length, "length_min": min(2, length)})
        out[length] = workload(params, sizes.train_examples)
    return out


def measure(work: Workload, raw: dict, sizes: Sizes) -> tuple[Section, dict]:
    rows, exponents = [], {}

    def record(name: str, unit: str, xs: Sequence[float], seconds: list, expected: str) -> None:
        slope = loglog_slope(xs, seconds)
        exponents[name] = slope
        points = ", ".join(f"{x:g}: {1e3 * s:.1f}" for x, s in zip(xs, seconds, strict=True))
        rows.append(Row(f"{name} (ms {unit}; {points})", f"exponent {slope:.2f}", expected))

    steps = sizes.steps
    seconds = sweep(lambda b: train_loop(work, b, steps), sizes.batch_sizes, sizes.repeats)
    record(
        "train step vs batch size",
        "per step",
        sizes.batch_sizes,
        [s / steps for s in seconds],
        "≈ 1",
    )
    by_length = length_workloads(raw, sizes)
    batch = work.params.cvae.common.batch_size
    targets = [World.from_params(w.params.data).n_targets for w in by_length.values()]
    seconds = sweep(
        lambda n: train_loop(by_length[n], batch, steps), sizes.length_max, sizes.repeats
    )
    record(
        f"train step vs T (batch {batch})",
        "per step",
        targets,
        [s / steps for s in seconds],
        "report",
    )
    model = scoring_model(work)
    seconds = sweep(
        lambda k: lambda: evaluate(work, model, sizes.k_examples, k),
        sizes.iw_samples,
        sizes.repeats,
    )
    record(
        f"evaluation vs K ({sizes.k_examples} examples)",
        "per run",
        sizes.iw_samples,
        seconds,
        "≈ 1",
    )
    seconds = sweep(
        lambda n: lambda: evaluate(work, model, n, sizes.n_test_k), sizes.n_test, sizes.repeats
    )
    record(f"evaluation vs n_test (K = {sizes.n_test_k})", "per run", sizes.n_test, seconds, "≈ 1")
    world = work.world
    seconds = sweep(
        lambda n: lambda: sample_table(sample(world, n, np.random.default_rng(0)), "train", 0),
        sizes.generate_n,
        sizes.repeats,
    )
    record("generation vs n", "per run", sizes.generate_n, seconds, "≈ 1")
    section = Section(
        "4. Cost growth (log-log exponents)",
        rows,
        [
            f"Median of {sizes.repeats} interleaved repeats per point; the exponent is the "
            "least-squares slope of log time on log size. T = max_y_len + 1 for length_max "
            f"{', '.join(map(str, sizes.length_max))}; the sequence the decoder reads is "
            "about 2T long, so attention alone would grow as T², but at these lengths the "
            "per-step fixed costs and the linear layers dominate."
        ],
    )
    return section, exponents


def sections() -> list[Section]:
    sizes, raw = Sizes(), raw_params()
    work = workload(params_with(raw), sizes.train_examples)
    return [measure(work, raw, sizes)[0]]


if __name__ == "__main__":
    run_alone(__doc__, sections)
