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

from bench import bench_evaluate, bench_memory, bench_scaling, bench_train
from bench.timing import Section, interleaved, loglog_slope
from bench.workload import merge, params_with, raw_params, workload
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
    section, figures = bench_memory.measure(raw, bench_memory.Sizes(test_factor=2))
    for key in ("train_cvae_small", "train_cvae_large", "evaluate_small", "evaluate_large"):
        # MiB: torch alone loads about 200 MiB; a tiny-profile stage stays far below 2 GiB
        assert 150 < figures[key] < 2_000
    assert figures["evaluate_growth"] == pytest.approx(
        figures["evaluate_large"] / figures["evaluate_small"] - 1
    )


@pytest.mark.parametrize("queries", [6, 2])
@pytest.mark.parametrize("form", ["two_fused_calls", "torch_softmax_attend"])
def test_study_bench_reference_attention_equals_the_library_one(form: str, queries: int) -> None:
    """The study bench's levers time `Memory.attend` against its earlier forms (two fused
    attention calls; torch's softmax and logsumexp): each must give the same values (and
    gradients) for the comparison to be one of speed alone, also when the queries are the
    last rows only (the decoder's last block)."""
    import bench.earlier_forms
    from zgain.base.model import Memory

    reference_form = getattr(bench.earlier_forms, form)
    gen = torch.Generator().manual_seed(0)
    q = torch.randn(3, 4, queries, 8, generator=gen, requires_grad=True)
    k, v = (torch.randn(3, 4, 6, 8, generator=gen, requires_grad=True) for _ in range(2))
    keys, values = (torch.randn(3, 4, 1, 8, generator=gen) for _ in range(2))
    memory = Memory(keys, values, torch.tensor([0.5, -0.3, 1.0, 0.0]))
    ours, reference = memory.attend(q, k, v, 0.0), reference_form(memory, q, k, v, 0.0)
    assert torch.allclose(ours, reference, atol=1e-6)
    grads = torch.autograd.grad(ours.square().sum(), (q, k, v))
    reference_grads = torch.autograd.grad(reference.square().sum(), (q, k, v))
    assert all(torch.allclose(a, b, atol=1e-5) for a, b in zip(grads, reference_grads, strict=True))


def test_dvc_lock_bench_removes_only_the_entries_of_stages_not_in_the_pipeline(tmp_path) -> None:
    from bench import bench_dvc_lock

    dvc_yaml = (REPO_ROOT / "dvc.yaml").read_text()
    lock = yaml.safe_load((REPO_ROOT / "dvc.lock").read_text())
    kept = {"check_params": lock["stages"]["check_params"]}
    gone = {"train_cvae@token_mean-0.5-0": {"cmd": "python -m stages.train_cvae"}}
    stale = yaml.safe_dump({"schema": "2.0", "stages": {**kept, **gone}})
    root = bench_dvc_lock.project(tmp_path / "p", dvc_yaml, stale)
    clean = bench_dvc_lock.pruned(root, stale)
    assert set(yaml.safe_load(clean)["stages"]) == {"check_params"}
    deps = len(kept["check_params"]["deps"])
    assert bench_dvc_lock.lock_figures(clean).endswith(f"1 entries, {deps} deps")


def test_steps_seeds_bench_splits_capture_over_the_halves_of_the_test_split() -> None:
    import pandas as pd

    from bench.steps_seeds import halves_capture

    examples = pd.DataFrame(
        {
            "nll_marginal": [2.0, 3.0, 1.0, 1.0],
            "nll_post": [1.0, 1.0, 0.5, 0.5],
            "oracle_info": [2.0, 2.0, 1.0, 1.0],
        }
    )
    # gains 1, 2 | 0.5, 0.5 over oracle 2, 2 | 1, 1
    assert halves_capture(examples) == pytest.approx((4.0 / 6.0, 0.75, 0.5))


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


def test_stacked_members_linear_equals_one_linear_per_member() -> None:
    """The stacking lever times one batched matmul against a linear per member: the same
    values and gradients, so the comparison is one of speed alone."""
    from bench.study_levers import per_member_linear, stacked_linear

    gen = torch.Generator().manual_seed(0)
    x = torch.randn(3, 5, 4, generator=gen, requires_grad=True)
    weight = torch.randn(3, 6, 4, generator=gen, requires_grad=True)
    bias = torch.randn(3, 6, generator=gen, requires_grad=True)
    stacked = stacked_linear(x, weight, bias)
    apart = torch.stack(per_member_linear(list(x), list(weight), list(bias)))
    assert stacked.shape == (3, 5, 6) and torch.allclose(stacked, apart, atol=1e-6)
    grads = torch.autograd.grad(stacked.square().sum(), (x, weight, bias))
    apart_grads = torch.autograd.grad(apart.square().sum(), (x, weight, bias))
    assert all(torch.allclose(a, b, atol=1e-5) for a, b in zip(grads, apart_grads, strict=True))


def test_stage_breakdown_times_each_work_function_of_a_stage_process(tiny_raw, tmp_path) -> None:
    from bench.study_levers import WORK, stage_breakdown, start_up_rows
    from bench.workload import save_fresh_base

    raw = merge(tiny_raw, {"data": {"n_train": 200, "n_test": 40}, "cvae": {"rates": [1.0]}})
    base = save_fresh_base(params_with(raw), tmp_path / "base.pt")
    root = bench_memory.prepare(tmp_path / "project", raw, base)
    breakdown = {name: stage_breakdown(root, name, 1) for name in WORK}
    for name, parts in breakdown.items():
        work = [parts[function] for _, function in WORK[name]]
        assert all(seconds > 0 for seconds in work)
        # the wall is the work plus the fixed cost; a process's start-up takes a while
        assert parts["fixed"] + sum(work) == pytest.approx(parts["wall"])
        assert parts["fixed"] > 0.5
    rows = start_up_rows(breakdown, one_run_seconds=100.0, n_runs=3)
    saved = 2 * (breakdown["train_cvae"]["fixed"] + breakdown["evaluate"]["fixed"])
    assert rows[-1].value == f"{saved:.1f} s, {saved / 100:.0%} of the one-run stages' time"


def test_earlier_step_prelude_patches_the_four_levers_and_trains_the_same_run(
    tiny_raw, tmp_path
) -> None:
    """The study bench's baseline runs the step as it was before the engine: the prelude must
    switch all four levers, and the run it trains must be the one today's step trains (the
    forms differ in speed and float rounding only)."""
    import subprocess
    import sys

    from bench.bench_study import EARLIER_STEP
    from bench.study_levers import stage
    from bench.workload import REPO_ROOT, VARIANT, save_fresh_base
    from zgain.core.runs import Group

    check = "\n".join(
        [
            EARLIER_STEP,
            "import torch, zgain.cvae.fit as f",
            "from bench.earlier_forms import two_fused_calls, whole_pass_decode",
            "from zgain.base.model import Memory",
            "from zgain.cvae.model import CVAE",
            "assert Memory.attend is two_fused_calls",
            "assert CVAE.decode is whole_pass_decode",
            "assert f.fused_adam(torch.device('cpu')) is False",
            "passes = []",
            "class Model:",
            "    def base_features(self, tokens): passes.append(tokens); return tokens",
            "class Part: encoder_input, prior_input = torch.ones(2, 5), torch.zeros(2, 3)",
            "features = f.ReaderFeatures.of(Model(), Part())",
            "assert len(passes) == 2 and features.prior.shape == (2, 3)",
        ]
    )
    done = subprocess.run([sys.executable, "-c", check], cwd=REPO_ROOT, capture_output=True)
    assert done.returncode == 0, done.stderr.decode()[-2000:]

    raw = merge(tiny_raw, {"data": {"n_train": 200, "n_test": 40}, "cvae": {"rates": [1.0]}})
    base = save_fresh_base(params_with(raw), tmp_path / "base.pt")
    states = []
    for name, prelude in [("today", ""), ("earlier", EARLIER_STEP)]:
        root = bench_memory.prepare(tmp_path / name, raw, base)
        stage(root, "train_cvae", 1, prelude)
        group = Group(0, 0, VARIANT).folder(root / params_with(raw).paths.cvae_dir)
        (checkpoint,) = group.glob("*.pt")
        states.append(torch.load(checkpoint, weights_only=False)["state_dict"])
    today, earlier = states
    assert today.keys() == earlier.keys()
    moved = max((today[k].float() - earlier[k].float()).abs().max().item() for k in today)
    assert 0 < moved < 1e-4, moved  # rounding moves it, a different run would by far more


SMALL = {
    "data": {"n_train": 400, "n_val": 64, "n_test": 40},
    "cvae": {
        "common": {
            "steps": 30,
            "lr_warmup_steps": 5,
            "warmup_steps": 10,
            "log_every": 10,
            "val_every": 30,
            "val_examples": 32,
            "val_iw_samples": 4,
        }
    },
}
"""A run small enough for a test, the same model: only data sizes and schedules shrink."""


def test_bench_then_runs_the_earlier_code_on_the_model_today_trains(tmp_path) -> None:
    """The baseline of bench_then is the earlier tree itself: its processes import zgain from
    the copy, its params take one rate and seed, and its train_cvae trains the model today's
    code trains under SAME_MODEL (every parameter name and shape)."""
    from bench import bench_then
    from bench.study_levers import stage
    from bench.workload import save_fresh_base

    tree = bench_then.extract(bench_then.THEN, tmp_path / "then")
    assert bench_then.imported_from(tree).is_relative_to(tree)
    then_raw = merge(bench_then.then_raw(tree, 0.5, 400), SMALL)
    assert then_raw["cvae"]["rates"] == [0.5] and then_raw["cvae"]["seeds"] == [0]
    assert then_raw["cvae"]["common"]["steps"] == 30
    then_root = bench_then.prepare_then(tree, tmp_path / "then-project", then_raw)
    bench_then.then_stage(tree, then_root, "train_cvae", 0.5, 1)

    raw = merge(raw_params(), merge(bench_then.SAME_MODEL, SMALL))
    raw = merge(raw, {"cvae": {"rates": [0.5]}})
    base = save_fresh_base(params_with(raw), tmp_path / "base.pt")
    today = bench_memory.prepare(tmp_path / "today", raw, base)
    stage(today, "train_cvae", 1)
    n_params, n_checkpoints = bench_then.same_model([then_root, today], 2)
    assert n_checkpoints == 2 and n_params > 10_000

    default_model = merge(raw_params(), merge(SMALL, {"cvae": {"rates": [0.5]}}))
    memory = bench_memory.prepare(tmp_path / "memory", default_model, base)
    stage(memory, "train_cvae", 1)  # today's default model has memory slots: another model
    with pytest.raises(RuntimeError, match="different models"):
        bench_then.same_model([then_root, memory], 2)
    with pytest.raises(RuntimeError, match="1 checkpoints, expected 2"):
        bench_then.same_model([then_root], 2)


def test_bench_then_names_a_commit_missing_from_the_history(tmp_path) -> None:
    from bench import bench_then

    with pytest.raises(RuntimeError, match="not in this clone's history"):
        bench_then.extract("0" * 40, tmp_path / "nowhere")


def test_per_repeat_totals_each_repeat_of_a_layout() -> None:
    from bench.bench_then import per_repeat

    assert per_repeat([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 2) == [6.0, 15.0]
    with pytest.raises(ValueError, match="do not split into 4 repeats"):
        per_repeat([1.0, 2.0, 3.0], 4)


def test_results_main_runs_the_measure_at_the_default_steps_and_writes_its_file(
    tmp_path, monkeypatch
) -> None:
    from bench.timing import results_main

    calls = []

    def measure(steps: int, repeats: int) -> Section:
        calls.append((steps, repeats))
        return Section("a section")

    out = tmp_path / "results.md"
    monkeypatch.setattr("sys.argv", ["bench", "--out", str(out)])
    results_main("Doc line.\nmore", tmp_path / "unused.md", 3, "A title", "bench.x", measure)
    steps = raw_params()["cvae"]["common"]["steps"]
    assert calls == [(steps, 3)]
    text = out.read_text()
    assert text.startswith("# A title\n")
    assert f"`python -m bench.x --steps {steps} --repeats 3`" in text
    assert "## a section" in text and not (tmp_path / "unused.md").exists()
    monkeypatch.setattr("sys.argv", ["bench", "--steps", "7", "--repeats", "2", "--out", str(out)])
    results_main("Doc line.", out, 3, "A title", "bench.x", measure)
    assert calls[-1] == (7, 2)
    assert "`python -m bench.x --steps 7 --repeats 2`" in out.read_text()


def test_rate_rule_names_each_controller_and_reads_its_settings() -> None:
    from bench.rate_rule import cvae_update, label, parse_set, rate_target

    older = {"cvae": {"common": {"rate_target": {"eta": 0.05}}}}  # before rule and penalty
    assert rate_target(older) == {
        "rule": "difference",
        "penalty": 0.0,
        "eta": 0.05,
        "weight_average": 0.0,
    }
    assert label(rate_target(older)) == "difference"
    pinned = {"rule": "difference", "penalty": 1.0, "penalty_from": 0.75}
    assert label(pinned) == "difference + penalty 1 from 0.75 of the steps"
    averaged = {**pinned, "weight_average": 0.95}
    assert label(averaged) == (
        "difference + penalty 1 from 0.75 of the steps, saved weights averaged (EMA 0.95)"
    )
    assert cvae_update(averaged, [0]) == {
        "common": {"rate_target": pinned, "weight_average": 0.95},
        "seeds": [0],
    }
    assert parse_set(["penalty_from=0.0", "rule=log_ratio"]) == {
        "penalty_from": 0.0,
        "rule": "log_ratio",
    }
    with pytest.raises(SystemExit, match="--set takes KEY=VALUE, got 'penalty'"):
        parse_set(["penalty"])
