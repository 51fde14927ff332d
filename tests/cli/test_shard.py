"""`zgain shard`: which stages a shard runs, and the dvc commands it runs them with."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from zgain.cli import shard as shard_module
from zgain.cli.app import app
from zgain.cli.shard import RUN_STAGES, run_names, shard_stages

# A matrix with a third axis: selection must not depend on the axes, only on the names.
VARIANTS, RATES, SEEDS = ("token_mean", "token_sum", "token_share_cc"), ("0.5", "2.0"), (0, 1, 2)
RUNS = [f"{v}-{r}-{s}" for v in VARIANTS for r in RATES for s in SEEDS]
STAGES = [
    "check_params",
    "generate",
    "train_base",
    *(f"train_cvae@{run}" for run in RUNS),
    *(f"evaluate@{run}" for run in RUNS),
    "report",
]


def test_run_names_are_the_items_of_the_per_run_stages():
    assert run_names(STAGES) == sorted(RUNS)
    assert run_names(["report", "train_base", "other@x"]) == []


@pytest.mark.parametrize("count", [1, 2, 3, 5, 18, 40])
def test_the_shards_partition_the_runs_and_keep_each_run_whole(count):
    shards = [shard_stages(STAGES, index, count) for index in range(count)]
    every = [stage for stages in shards for stage in stages]
    assert sorted(every) == sorted(s for s in STAGES if "@" in s)  # each stage exactly once
    for stages in shards:
        runs = [s.partition("@")[2] for s in stages]
        # a run's training and evaluation: both in this shard, training first
        assert stages == [f"{stage}@{run}" for run in runs[::2] for stage in RUN_STAGES]
    sizes = [len(stages) // 2 for stages in shards]
    assert max(sizes) - min(sizes) <= 1  # as even as the number of runs allows


def test_the_selection_is_deterministic_whatever_the_listing_order():
    assert shard_stages(STAGES[::-1], 1, 4) == shard_stages(STAGES, 1, 4)
    assert shard_stages(STAGES, 0, 18) == [
        "train_cvae@token_mean-0.5-0",
        "evaluate@token_mean-0.5-0",
    ]


@pytest.fixture
def dvc_calls(monkeypatch):
    """Replace dvc: `stage list` answers STAGES, every other call is recorded."""
    calls: list[tuple[str, ...]] = []

    def fake(*args: str, capture: bool = False) -> str:
        calls.append(args)
        return "\n".join(STAGES) if args[:2] == ("stage", "list") else ""

    monkeypatch.setattr(shard_module, "dvc", fake)
    monkeypatch.setattr(shard_module, "default_remote", lambda: "storage")
    return calls


def test_a_shard_repros_its_stages_with_pull_then_pushes_them_with_the_run_cache(dvc_calls):
    result = CliRunner().invoke(app, ["shard", "--index", "2", "--count", "18"])
    assert result.exit_code == 0, result.output
    mine = shard_stages(STAGES, 2, 18)
    assert dvc_calls == [
        ("stage", "list", "--name-only"),
        ("repro", "--pull", *mine),
        ("push", "--run-cache", *mine),
    ]


def test_a_dry_run_or_an_empty_shard_runs_nothing(dvc_calls):
    result = CliRunner().invoke(app, ["shard", "--index", "0", "--count", "2", "--dry-run"])
    assert result.exit_code == 0
    assert " ".join(shard_stages(STAGES, 0, 2)) in result.output
    result = CliRunner().invoke(app, ["shard", "--index", "19", "--count", "20"])
    assert result.exit_code == 0 and "0 stages" in result.output
    assert dvc_calls == [("stage", "list", "--name-only")] * 2


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--index", "2", "--count", "2"], "must be below --count (2), got 2"),
        (["--index", "-1", "--count", "2"], "--index"),
        (["--index", "0", "--count", "0"], "--count"),
    ],
)
def test_a_bad_index_or_count_is_refused_before_any_dvc_call(dvc_calls, args, message):
    result = CliRunner().invoke(app, ["shard", *args])
    assert result.exit_code == 2
    assert message in result.output
    assert dvc_calls == []


def test_without_a_default_remote_the_shard_stops_before_running(dvc_calls, monkeypatch):
    monkeypatch.setattr(shard_module, "default_remote", lambda: None)
    result = CliRunner().invoke(app, ["shard", "--index", "0", "--count", "2"])
    assert result.exit_code == 2
    assert "error: no default DVC remote" in result.output
    assert dvc_calls == [("stage", "list", "--name-only")]
