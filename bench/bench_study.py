"""Study throughput: runs per hour of one-run stages against grouped stages, and the step's
distance from its FLOP bound, with the gain of each lever alone.

    python -m bench.bench_study [--steps N] [--repeats R] [--out bench/study-results.md]

Stages run as whole processes (start-up, loading, training, evaluation, writes), as `dvc repro`
runs them, on a project prepared at the default params (a sampled world and a freshly
initialized base: costs do not depend on the weights). "One-run stages" is the layout before
groups: one process per (variant, rate, seed) with every thread; "grouped" is today's: one
process per (variant, seed) group, its runs side by side (docs/architecture.md#runs-and-groups).
One-run stages run twice: with today's step, and with the step as it was before the engine
(`EARLIER_STEP`), so the ratio says what the engine gives and the other what grouping alone
gives. All are interleaved, median of the repeats. The lever rows time one train step in this
process: each lever alone against the solo step on every thread.
"""

from __future__ import annotations

import os

os.environ.setdefault("TQDM_DISABLE", "1")

import tempfile  # noqa: E402
from functools import partial  # noqa: E402
from pathlib import Path  # noqa: E402
from unittest import mock  # noqa: E402

import torch  # noqa: E402

from bench.bench_memory import prepare  # noqa: E402
from bench.earlier_forms import torch_softmax_attend, two_fused_calls  # noqa: E402
from bench.step_levers import LEVERS, PEAK_SIZE, step_levers  # noqa: E402
from bench.study_levers import stacked_linears_ms, stage, stage_breakdown, start_up_rows  # noqa: E402
from bench.timing import Row, Section, interleaved, median, results_main  # noqa: E402
from bench.workload import (  # noqa: E402
    VARIANT,
    merge,
    params_with,
    raw_params,
    save_fresh_base,
    workload,
)
from zgain.base.model import Memory  # noqa: E402
from zgain.core.environment import available_cpus  # noqa: E402
from zgain.core.runs import Group  # noqa: E402
from zgain.core.sidebyside import plan  # noqa: E402
from zgain.evaluate.scoring import evaluate_examples  # noqa: E402

TARGET = 1.8
"""Runs per hour of the grouped stages over one-run stages that the engine aims for."""


STAGES = ("train_cvae", "evaluate")
"""The group stages, in the order a run goes through them."""

PER_TENSOR_ADAM = "import zgain.cvae.fit as f; f.fused_adam = lambda device: False"
"""A stage's prelude that gives its runs Adam's per-tensor loop instead of the fused kernel."""

EARLIER_STEP = "from bench.earlier_forms import use_earlier_step; use_earlier_step()"
"""A stage's prelude that gives its runs the step as it was before the study engine."""


def study_seconds(
    raw: dict, steps: int, repeats: int, threads: int
) -> tuple[dict[str, float], dict[str, dict[str, float]]]:
    """Median seconds to train and evaluate every rate of one group, both ways; then where one
    one-run stage process's seconds go, per stage (`stage_breakdown`, one run each)."""
    rates = raw["cvae"]["rates"]
    raw = merge(raw, {"cvae": {"common": {"steps": steps}}})
    with tempfile.TemporaryDirectory() as tmp:
        params = params_with(raw)
        base_path = save_fresh_base(params, Path(tmp) / "base.pt")
        grouped = prepare(Path(tmp) / "grouped", raw, base_path)
        solo = [
            prepare(Path(tmp) / f"solo{k}", merge(raw, {"cvae": {"rates": [r]}}), base_path)
            for k, r in enumerate(rates)
        ]

        def one_run_stages(prelude: str = "") -> None:
            for root in solo:
                stage(root, "train_cvae", threads, prelude)
                stage(root, "evaluate", threads, prelude)

        def grouped_stages() -> None:
            stage(grouped, "train_cvae", threads)
            stage(grouped, "evaluate", threads)

        def grouped_train_per_tensor_adam() -> None:
            stage(grouped, "train_cvae", threads, PER_TENSOR_ADAM)

        def grouped_train() -> None:
            stage(grouped, "train_cvae", threads)

        times = interleaved(
            {
                "one-run stages": one_run_stages,
                "one-run stages, the earlier step": partial(one_run_stages, EARLIER_STEP),
                "grouped stages": grouped_stages,
                "grouped train_cvae, fused Adam": grouped_train,
                "grouped train_cvae, per-tensor Adam": grouped_train_per_tensor_adam,
            },
            repeats,
            0,
        )
        for root, expected in [(grouped, len(rates)), *((r, 1) for r in solo)]:
            group = Group(params.base.screening, 0, VARIANT).folder(root / params.paths.cvae_dir)
            written = list(group.glob("rate*.pt"))
            if len(written) != expected:
                raise RuntimeError(f"{root}: {len(written)} checkpoints, expected {expected}")
        breakdown = {name: stage_breakdown(solo[0], name, threads) for name in STAGES}
    return {name: median(t) for name, t in times.items()}, breakdown


def evaluation_seconds(raw: dict, threads: int, repeats: int = 3) -> dict[str, float]:
    """Median seconds to score 256 examples at the default K, with `Memory.attend` as is and in
    its earlier forms (two fused calls; torch's softmax), interleaved."""
    params = params_with(raw)
    work = workload(params, 256)
    torch.manual_seed(0)
    model = work.cvae().eval()
    settings = params.evaluate

    def score() -> None:
        evaluate_examples(
            model, work.batch, iw_samples=settings.iw_samples, batch_size=settings.batch_size,
            max_x_len=work.max_x_len, device=torch.device("cpu"), seed=0,
        )  # fmt: skip

    def score_two_calls() -> None:
        with mock.patch.object(Memory, "attend", two_fused_calls):
            score()

    def score_torch_softmax() -> None:
        with mock.patch.object(Memory, "attend", torch_softmax_attend):
            score()

    torch.set_num_threads(threads)
    times = interleaved(
        {
            "one score matrix": score,
            "two fused calls": score_two_calls,
            "torch's softmax": score_torch_softmax,
        },
        repeats,
        1,
    )
    return {name: median(t) for name, t in times.items()}


def measure(raw: dict, steps: int, repeats: int) -> Section:
    threads = available_cpus()
    n_runs = len(raw["cvae"]["rates"])
    study, breakdown = study_seconds(raw, steps, repeats, threads)
    levers = step_levers(raw, threads)
    scoring = evaluation_seconds(raw, threads)
    members = len(plan(n_runs, threads, "cpu").shares(range(n_runs))[0])
    stacking = stacked_linears_ms(workload(params_with(raw), 256), members, 1)
    layouts = ("one-run stages, the earlier step", "one-run stages", "grouped stages")
    per_hour = {name: 3600 * n_runs / study[name] for name in layouts}
    ratio = per_hour["grouped stages"] / per_hour["one-run stages, the earlier step"]
    grouping = per_hour["grouped stages"] / per_hour["one-run stages"]
    bound_ms = 1e3 * levers["flops"] / levers["peak_flops"]
    solo_ms = levers["solo, every thread"]
    rows = [
        Row(f"runs per hour, {name}", f"{value:.0f} ({study[name]:.1f} s for {n_runs} runs)")
        for name, value in per_hour.items()
    ]
    rows.append(
        Row(
            "grouped ÷ one-run stages with the earlier step (the layout and the step before "
            "the study engine)",
            f"{ratio:.2f}×",
            f"≥ {TARGET}×",
            ratio >= TARGET,
        )
    )
    rows.append(
        Row("grouped ÷ one-run stages with today's step (grouping alone)", f"{grouping:.2f}×")
    )
    rows.append(
        Row(
            "train step (forward + backward) FLOPs; peak fp32 matmul",
            f"{levers['flops'] / 1e9:.2f} GFLOP; {levers['peak_flops'] / 1e9:.0f} GFLOP/s "
            f"({PEAK_SIZE}² on {threads} threads)",
        )
    )
    rows.append(
        Row(
            "solo step on every thread vs its FLOP bound",
            f"{solo_ms:.1f} ms vs {bound_ms:.1f} ms: {bound_ms / solo_ms:.0%} of the bound",
        )
    )
    for name in list(LEVERS)[1:]:
        rows.append(
            Row(f"run-step ms: {name}", f"{levers[name]:.1f} ms ({solo_ms / levers[name]:.2f}×)")
        )
    one = levers["solo, one thread"]
    rows.append(
        Row(
            f"members side by side ({threads} processes × 1 thread), run-steps per second",
            f"{threads / one * 1e3:.1f} vs {1e3 / solo_ms:.1f} solo on {threads} threads "
            f"({threads * solo_ms / one:.2f}×, if the processes do not slow each other)",
        )
    )
    ours = scoring["one score matrix"]
    forms = ", ".join(
        f"{name} {scoring[name]:.2f} ({scoring[name] / ours:.2f}×)"
        for name in ("two fused calls", "torch's softmax")
    )
    rows.append(
        Row(
            "evaluation of 256 examples (s): memory attention from one score matrix and one "
            "exponential pass vs its earlier forms",
            f"{ours:.2f}; {forms}",
        )
    )
    rows.append(
        Row(
            f"stacked members' linear layers ({members} members, one batched matmul per layer) "
            "vs one linear per member: decoder shapes in a step, forward + backward, one thread",
            f"{stacking['stacked']:.1f} vs {stacking['one per member']:.1f} ms "
            f"({stacking['one per member'] / stacking['stacked']:.2f}×)",
        )
    )
    rows.extend(start_up_rows(breakdown, study["one-run stages"], n_runs))
    fused_s = study["grouped train_cvae, fused Adam"]
    loop_s = study["grouped train_cvae, per-tensor Adam"]
    rows.append(
        Row(
            "grouped train_cvae stage (s): fused Adam vs Adam's per-tensor loop",
            f"{fused_s:.1f} vs {loop_s:.1f} ({loop_s / fused_s:.2f}×)",
        )
    )
    return Section(
        f"Study throughput ({steps} steps a run, {n_runs} rates a group, {threads} CPUs)",
        rows,
        [
            f"Stages as whole processes, interleaved, median of {repeats}; "
            f"variant {VARIANT}, default params otherwise (n_train {raw['data']['n_train']}). "
            "The earlier step: Adam's per-tensor loop, a reader pass per encoder, the decoder's "
            "last block on every position and memory attention as two fused calls, the step of "
            "the one-run stages before the engine. "
            "Lever rows: one train step in this process, the ratio against the solo step on "
            "every thread; each lever's blocks of 10 steps interleaved with the others' (one "
            "untimed), median of 5. The evaluation row scores 256 "
            f"examples at K = {raw['evaluate']['iw_samples']} on {threads} threads, median of 3 "
            "interleaved.",
        ],
    )


def main() -> None:
    results_main(
        __doc__,
        Path(__file__).parent / "study-results.md",
        1,
        "Study throughput",
        "bench.bench_study",
        partial(measure, raw_params()),
    )


if __name__ == "__main__":
    main()
