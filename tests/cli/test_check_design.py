"""`zgain check` on the design that ships: one screening seed (no interval over seeds), the
claims over the confirming bases with intervals, and each run compared with its committed value."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from conftest import committed_repo
from typer.testing import CliRunner

from zgain.cli.app import app
from zgain.cli.check_bases import procedure_outside_counts, reversed_over_bases
from zgain.cli.check_runs import compare_runs

NAN = float("nan")
# one screening seed: the per-rate table has means and no interval
DECOMPOSITION = pd.DataFrame(
    [("token_mean", "capture", 0.65, NAN, NAN, 1), ("mean_tok", "capture", 0.66, NAN, NAN, 1)],
    columns=["variant", "metric", "mean", "low", "high", "n"],
)
PROCEDURE = [
    # a, b, rate, metric, mean, low, high, n, verdict
    ("token_sum", "token_mean", 1.0, "capture", -0.03, -0.15, 0.09, 4, "undetermined"),
    ("mean_cc", "token_mean", 1.0, "marginal_gain", -0.07, -0.10, -0.04, 4, "worse"),
]
RUNS = [
    # variant, rate, seed, capture, marginal_gain
    ("token_mean", 1.0, 0, 0.654627117208985, 0.01),
    ("mean_tok", 1.0, 0, 0.6643835516086657, -0.02),
    ("mean_tok", 0.5, 0, 0.4, NAN),
]


def write(repo: Path, procedure: list[tuple], runs: list[tuple]) -> None:
    tables = repo / "reports" / "tables"
    tables.mkdir(parents=True, exist_ok=True)
    DECOMPOSITION.to_csv(tables / "decomposition_rate1.0.csv", index=False)
    columns = ["a", "b", "rate", "metric", "mean", "low", "high", "n", "verdict"]
    pd.DataFrame(procedure, columns=columns).to_csv(tables / "procedure.csv", index=False)
    columns = ["variant", "rate", "seed", "capture", "marginal_gain"]
    pd.DataFrame(runs, columns=columns).to_csv(tables / "runs.csv", index=False)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return committed_repo(tmp_path, monkeypatch, lambda root: write(root, PROCEDURE, RUNS))


def test_an_unchanged_rerun_of_the_shipped_design_passes_and_says_what_it_compared(
    repo: Path,
) -> None:
    result = CliRunner().invoke(app, ["check"])
    assert result.exit_code == 0, result.output
    assert "per rate: 0 of 0 seed means (0 rates)" in result.output
    assert "none has an interval (one seed per run)" in result.output
    assert "over bases: 2 of 2 comparisons lie inside the committed intervals over 4 bases" in (
        result.output
    )
    assert "run by run (one seed, no interval): 3 of 3 runs equal the committed run in all 2" in (
        result.output
    )
    assert "zgain check: pass: 0 of 2 values outside the committed intervals" in result.output


def test_runs_retrained_elsewhere_are_reported_not_failed(repo: Path) -> None:
    runs = [list(r) for r in RUNS]
    runs[1][3] += 0.05  # mean_tok at C = 1 moved
    write(repo, PROCEDURE, [tuple(r) for r in runs])
    result = CliRunner().invoke(app, ["check"])
    assert result.exit_code == 0, result.output
    assert "2 of 3 runs equal the committed run in all 2 metrics; the largest |Δ capture| is " in (
        result.output
    )
    assert "0.0500 (mean_tok C = 1 seed 0)" in result.output


def test_a_claim_over_bases_that_reverses_fails(repo: Path) -> None:
    procedure = [list(r) for r in PROCEDURE]
    procedure[1][4:7] = [0.07, 0.04, 0.10]
    procedure[1][8] = "better"
    write(repo, [tuple(r) for r in procedure], RUNS)
    result = CliRunner().invoke(app, ["check"])
    assert result.exit_code == 1
    assert (
        "REVERSED: mean_cc − token_mean on marginal_gain at C = 1 over bases: worse in the "
        "committed run, better in the fresh one" in result.output
    )
    assert "zgain check: FAIL: 1 of 2 values outside" in result.output


def test_the_null_over_bases_counts_each_comparison_outside_at_its_rate() -> None:
    counts = procedure_outside_counts([0.9, 0.8, 1.0], draws=200_000, seed=3)
    assert counts.mean() == pytest.approx(0.1 + 0.2, abs=0.005)
    assert counts.max() <= 2  # the third is always inside


def test_run_comparison_treats_nan_on_both_sides_as_equal_and_on_one_side_as_moved() -> None:
    columns = ["variant", "rate", "seed", "capture", "marginal_gain"]
    committed = pd.DataFrame(RUNS, columns=columns).to_csv(index=False)
    runs = [list(r) for r in RUNS]
    runs[0][4] = NAN
    fresh = pd.DataFrame(runs, columns=columns).to_csv(index=False)
    same = compare_runs(committed, committed)
    moved = compare_runs(fresh, committed)
    assert (same.runs, same.identical, same.metrics) == (3, 3, 2)
    assert (moved.runs, moved.identical) == (3, 2)
    assert compare_runs(None, committed) is None


def test_reversal_needs_a_verdict_column_on_both_sides() -> None:
    text = pd.DataFrame([("a", "b", 1.0, "capture")], columns=["a", "b", "rate", "metric"])
    assert reversed_over_bases(text.to_csv(index=False), text.to_csv(index=False)) == []
