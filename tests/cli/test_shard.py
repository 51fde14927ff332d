"""`zgain shard`: which stages a shard runs, and the dvc commands it runs them with."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from zgain.cli import shard as shard_module
from zgain.cli.app import app
from zgain.cli.shard import RUN_STAGES, run_names, shard_stages

# Screening groups on base 0 (base-variant-seed) and confirming groups on bases 1, 2 (base-seed),
# beside per-base stages whose names carry `@` too: selection goes by the stage names alone.
VARIANTS, SEEDS, BASES = ("token_mean", "token_sum", "token_share_cc"), (0, 1, 2), (0, 1, 2)
SCREENING = [f"0-{v}-{s}" for v in VARIANTS for s in SEEDS]
CONFIRMING = [f"{b}-{s}" for b in BASES[1:] for s in SEEDS[:2]]
GROUPS = sorted([*SCREENING, *(f"confirm_{item}" for item in CONFIRMING)])
STAGES = [
    "check_params",
    "generate",
    *(f"{stage}@{b}" for b in BASES for stage in ("train_base", "surprisal", "normalizer")),
    *(f"train_cvae@{item}" for item in SCREENING),
    *(f"evaluate@{item}" for item in SCREENING),
    *(f"confirm_train_cvae@{item}" for item in CONFIRMING),
    *(f"confirm_evaluate@{item}" for item in CONFIRMING),
    "report",
]
GROUP_STAGE_NAMES = [
    s for s in STAGES if s.partition("@")[0].removeprefix("confirm_") in RUN_STAGES
]


def _stages_of(group: str) -> list[str]:
    """A group's stages in DAG order: `confirm_1-0` → confirm_train_cvae@1-0, confirm_evaluate@1-0
    (each screening group's without the prefix)."""
    prefix = "confirm_" if group.startswith("confirm_") else ""
    return [f"{prefix}{stage}@{group.removeprefix(prefix)}" for stage in RUN_STAGES]


def test_run_names_are_the_groups_of_the_group_stages():
    assert run_names(STAGES) == GROUPS
    assert run_names(["report", "train_base@0", "surprisal@1", "other@x"]) == []
    assert run_names(["confirm_evaluate@3-0", "evaluate@0-mean_tok-1"]) == [
        "0-mean_tok-1",
        "confirm_3-0",
    ]


@pytest.mark.parametrize("count", [1, 2, 3, 5, 13, 40])
def test_the_shards_partition_the_groups_and_keep_each_group_whole(count):
    shards = [shard_stages(STAGES, index, count) for index in range(count)]
    every = [stage for stages in shards for stage in stages]
    assert sorted(every) == sorted(GROUP_STAGE_NAMES)  # each group stage exactly once
    for index, stages in enumerate(shards):
        # a group's training and evaluation: both in this shard, training first
        assert stages == [stage for group in GROUPS[index::count] for stage in _stages_of(group)]
    sizes = [len(stages) // 2 for stages in shards]
    assert max(sizes) - min(sizes) <= 1  # as even as the number of groups allows


def test_the_selection_is_deterministic_whatever_the_listing_order():
    assert shard_stages(STAGES[::-1], 1, 4) == shard_stages(STAGES, 1, 4)
    assert shard_stages(STAGES, 0, len(GROUPS)) == [
        "train_cvae@0-token_mean-0",
        "evaluate@0-token_mean-0",
    ]
    assert shard_stages(STAGES, len(SCREENING), len(GROUPS)) == [
        "confirm_train_cvae@1-0",
        "confirm_evaluate@1-0",
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
    result = CliRunner().invoke(app, ["shard", "--index", "2", "--count", "13"])
    assert result.exit_code == 0, result.output
    mine = shard_stages(STAGES, 2, 13)
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
