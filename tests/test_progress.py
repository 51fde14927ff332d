"""`make repro-progress` (zgain.progress): DVC's lines read as stage events, the plan of stages a
run executes, and the time left from the stages of each kind already timed."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO_ROOT

from zgain.progress import (
    event,
    kind_of,
    minutes,
    plan,
    progress_line,
    read_prior,
    recorded_run,
    time_left,
)


def test_dvc_lines_become_stage_events() -> None:
    assert event("Running stage 'train_cvae@0-token_sum-0':\n") == (
        "run",
        "train_cvae@0-token_sum-0",
    )
    assert event("Stage 'generate' didn't change, skipping") == ("skip", "generate")
    assert event("Stage 'evaluate@0-x-1' is cached - skipping run, checking out outputs") == (
        "cached",
        "evaluate@0-x-1",
    )
    for other in ("> python -m stages.generate", "Updating lock file 'dvc.lock'", ""):
        assert event(other) is None


def test_a_stage_kind_is_its_name_before_the_at() -> None:
    assert kind_of("train_cvae@0-token_sum-0") == "train_cvae"
    assert kind_of("report") == "report"


def test_the_plan_is_the_changed_stages_and_everything_downstream() -> None:
    dependents = {
        "generate": ["train_base@0", "train_base@1"],
        "train_base@0": ["surprisal@0"],
        "train_base@1": ["surprisal@1"],
        "surprisal@0": ["report"],
        "surprisal@1": ["report"],
    }
    assert plan(["train_base@1"], dependents) == {"train_base@1", "surprisal@1", "report"}
    assert plan(["generate"], dependents) == set(dependents) | {"report"}
    assert plan([], dependents) == set()


def test_time_left_takes_this_runs_mean_then_the_last_runs() -> None:
    seen = {"train_base": [100.0, 140.0]}  # two bases timed in this run: 120 s each
    prior = {"train_base": 999.0, "surprisal": 10.0}
    remaining = ["train_base@2", "train_base@3", "surprisal@0", "report"]
    assert time_left(remaining, seen, prior) == (2 * 120.0 + 10.0, ["report"])
    assert time_left(remaining[:3], seen, prior) == (250.0, [])
    assert time_left([], seen, prior) == (0.0, [])


def test_minutes_round_to_an_estimate() -> None:
    assert [minutes(s) for s in (0, 29, 31, 14 * 60 + 20, 65 * 60)] == [
        "under 1 min",
        "under 1 min",
        "1 min",
        "14 min",
        "1 h 5 min",
    ]


def test_the_progress_line_says_at_least_while_a_kind_has_no_time() -> None:
    assert (
        progress_line(12, 73, "train_cvae@0-x-0", 14 * 60, 31 * 60, [])
        == "zgain: stage 12 of 73 (train_cvae@0-x-0), 14 min elapsed, about 31 min left"
    )
    assert progress_line(2, 73, "train_base@0", 5, 600, ["train_cvae", "report"]) == (
        "zgain: stage 2 of 73 (train_base@0), under 1 min elapsed, at least 10 min left "
        "(no time yet for train_cvae, report)"
    )
    assert progress_line(1, 2, "s", 0, 0, ["t"]) == (
        "zgain: stage 1 of 2 (s), under 1 min elapsed, under 1 min left (no time yet for t)"
    )


def test_the_last_runs_times_are_read_back_or_ignored(tmp_path: Path) -> None:
    path = tmp_path / "times.json"
    assert read_prior(path) == {}
    path.write_text(json.dumps({"train_base": 120.5}))
    assert read_prior(path) == {"train_base": 120.5}
    path.write_text("not json")
    assert read_prior(path) == {}


def test_the_recorded_whole_run_is_quoted_from_its_record() -> None:
    records = json.loads((REPO_ROOT / "bench" / "wall-times.json").read_text())
    minutes_, seconds = divmod(round(records["make repro"]["seconds"]), 60)
    line = recorded_run(REPO_ROOT / "bench" / "wall-times.json")
    assert line is not None and f"took {minutes_} min {seconds} s on" in line


@pytest.mark.e2e
def test_a_run_prints_stage_k_of_n_and_records_the_times(tmp_path: Path) -> None:
    """Two stages, the second downstream of the first: both planned, both counted, both timed."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    (tmp_path / "dvc.yaml").write_text(
        "stages:\n"
        "  first:\n    cmd: echo a > a.txt\n    outs: [a.txt]\n"
        "  second:\n    cmd: cat a.txt > b.txt\n    deps: [a.txt]\n    outs: [b.txt]\n"
    )
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run([sys.executable, "-m", "dvc", "init", "-q"], cwd=tmp_path, check=True)
    run = subprocess.run(
        [sys.executable, "-m", "zgain.progress"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    lines = [line for line in run.stdout.splitlines() if line.startswith("zgain: stage")]
    assert [line.split(",")[0] for line in lines] == [
        "zgain: stage 1 of 2 (first)",
        "zgain: stage 2 of 2 (second)",
    ]
    assert set(read_prior(tmp_path / ".dvc" / "tmp" / "zgain-stage-times.json")) == {
        "first",
        "second",
    }
