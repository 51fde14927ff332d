"""Smoke tests of the benchmark suite at tiny sizes: each benchmark runs and returns sane numbers.

No timing is asserted: only that the figures are what the benchmark says they are.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import yaml
from conftest import REPO_ROOT

from bench import bench_evaluate, bench_scaling, bench_stages, bench_train
from bench.common import (
    Section,
    interleaved,
    loglog_slope,
    machine,
    merge,
    params_with,
    raw_params,
    results_path,
    workload,
)
from zgain.cvae.terms import TERMS, TermBatch
from zgain.params import UnifiedParams

TINY = yaml.safe_load((REPO_ROOT / "tests" / "tiny_profile.yaml").read_text())


def positive(value: float) -> bool:
    return math.isfinite(value) and value > 0


@pytest.fixture(scope="module")
def tiny_raw() -> dict:
    return raw_params(TINY)


@pytest.fixture(scope="module")
def tiny_work(tiny_raw):
    return workload(params_with(tiny_raw), 256)


def test_loglog_slope_recovers_the_exponent_of_a_power_law() -> None:
    sizes = [10, 20, 40, 80]
    assert loglog_slope(sizes, [3.0 * s**1.5 for s in sizes]) == pytest.approx(1.5)
    assert loglog_slope([1, 2], [5.0, 5.0]) == pytest.approx(0.0, abs=1e-12)
    with pytest.raises(ValueError, match=">= 2 matching points"):
        loglog_slope([1], [1.0])
    with pytest.raises(ValueError, match="> 0"):
        loglog_slope([1, 2], [0.0, 1.0])


def test_interleaved_rotates_the_order_and_times_every_repeat() -> None:
    calls: list[str] = []
    times = interleaved({n: (lambda n=n: calls.append(n)) for n in "abc"}, repeats=3, warmup=1)
    assert calls == list("abcabcbcacab")
    assert {n: len(t) for n, t in times.items()} == {"a": 3, "b": 3, "c": 3}
    assert all(t >= 0 for ts in times.values() for t in ts)


def test_bare_cc_loss_equals_the_registered_term(tiny_work) -> None:
    nll = torch.rand(tiny_work.surprisal.shape, generator=torch.Generator().manual_seed(0))
    mask, b = tiny_work.batch.mask, tiny_work.surprisal
    expected = TERMS["cc"](TermBatch(nll, b, mask, 1.3, 1e-3, UnifiedParams()))
    assert bench_train.cc_recon(nll, b, mask, 1.3, 1e-3).item() == pytest.approx(expected.item())


def test_training_benchmarks_return_finite_ratios(tiny_work) -> None:
    sizes = bench_train.Sizes(n_examples=256, steps=2, repeats=1, trainer_repeats=1)
    first, second, figures = bench_train.measure(tiny_work, sizes)
    assert positive(figures["ratio"]) and positive(figures["speed"])
    # (step + forward) / step with both times > 0
    expected = (figures["table"] + figures["base"]) / figures["table"]
    assert figures["bound"] == pytest.approx(expected) and figures["bound"] > 1
    p = tiny_work.params
    runs = len(p.cvae.variants) * len(p.cvae.rates) * len(p.cvae.seeds)  # every training run
    online = runs * p.cvae.common.steps * p.cvae.common.batch_size / p.data.n_train
    assert bench_train.study_forwards(tiny_work) == (1.0, pytest.approx(online))
    assert "≥ 0.95" in first.markdown() and "≥ 0.95" in second.markdown()


def test_evaluation_benchmark_loops_to_the_same_scores(tiny_work) -> None:
    sizes = bench_evaluate.Sizes(n_examples=8, iw_samples=8, repeats=1, unit_examples=4)
    section, figures = bench_evaluate.measure(tiny_work, sizes, train_step_seconds=0.01)
    # The loop computes what the batch does, in float32 kernels whose blocking (and so rounding)
    # follows the batch shape and the CPU's vector path: each of the T per-token log-probs is
    # good to a few ulp and their float32 sum adds one ulp per term, so the two may differ by
    # (T + 4) float32 epsilons of the largest |M| (1e-5 nats for 7 tokens and M = 10), against
    # 3e-8 measured on an AVX2 CPU and the ~0.1 nats a wrong sample or token would cost.
    bound = (figures["tokens"] + 4) * np.finfo(np.float32).eps * figures["max_abs_nll"]
    assert figures["max_abs_diff"] <= bound
    assert positive(figures["speed"])
    assert 0 < figures["share"] < 1
    parts = ("generate", "train_base", "surprisal", "train_cvae", "evaluate")
    assert figures["share"] == pytest.approx(figures["evaluate"] / sum(figures[k] for k in parts))
    assert isinstance(section, Section)


def test_scaling_benchmark_fits_one_exponent_per_sweep(tiny_work, tiny_raw) -> None:
    sizes = bench_scaling.Sizes(
        batch_sizes=(8, 16),
        length_max=(2, 4),
        train_examples=64,
        steps=1,
        iw_samples=(2, 4),
        k_examples=4,
        n_test=(4, 8),
        n_test_k=2,
        generate_n=(50, 100),
        repeats=1,
    )
    section, exponents = bench_scaling.measure(tiny_work, tiny_raw, sizes)
    assert len(exponents) == 5 and all(np.isfinite(list(exponents.values())))
    assert len(section.rows) == 5


def test_memory_benchmark_measures_each_stage_process(tiny_raw) -> None:
    raw = merge(tiny_raw, {"data": {"n_train": 200, "n_test": 40}})
    section, figures = bench_stages.measure_memory(raw, bench_stages.MemorySizes(test_factor=2))
    for key in ("train_cvae_small", "train_cvae_large", "evaluate_small", "evaluate_large"):
        # MiB: torch alone loads about 200 MiB; a tiny-profile stage stays far below 2 GiB
        assert 150 < figures[key] < 2_000
    assert figures["evaluate_growth"] == pytest.approx(
        figures["evaluate_large"] / figures["evaluate_small"] - 1
    )


def test_wall_time_records_a_command_that_succeeds_and_only_then(tmp_path) -> None:
    import json
    import subprocess
    import sys

    out = tmp_path / "times.json"
    record = [sys.executable, "-m", "bench.wall_time", "--out", str(out)]
    done = subprocess.run([*record, "ok", "--", sys.executable, "-c", "pass"], cwd=REPO_ROOT)
    assert done.returncode == 0
    failed = subprocess.run(
        [*record, "bad", "--", sys.executable, "-c", "raise SystemExit(3)"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
    )
    assert failed.returncode != 0 and "exited with 3; nothing recorded" in failed.stderr
    records = json.loads(out.read_text())
    assert set(records) == {"ok"}
    assert records["ok"]["seconds"] >= 0 and records["ok"]["command"].endswith("-c pass")


def test_a_results_file_is_named_from_its_script_and_machine_and_names_its_commit() -> None:
    import re
    import subprocess

    path = results_path("run_all")
    assert path.parent == REPO_ROOT / "bench"
    assert re.fullmatch(r"run_all-(cpu\d+|[a-z0-9][a-z0-9-]*)\.md", path.name)
    head = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=REPO_ROOT, capture_output=True, text=True
    ).stdout.strip()
    assert machine()[0] == f"- commit: {head or 'unknown'}"
