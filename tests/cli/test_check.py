"""`zgain check`: a fresh report against the committed one, metric by metric."""

from __future__ import annotations

import math
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import committed_repo
from typer.testing import CliRunner

from zgain.cli.app import app
from zgain.cli.check import (
    PASS_LEVEL,
    Verdict,
    check_reports,
    inside_probability,
    null_outside_counts,
)

ROWS = [
    # variant, metric, mean, low, high, n, kind
    ("token_mean", "capture", 0.75, 0.70, 0.80, 3, "seeds"),
    ("token_mean", "marginal_gain", -0.04, -0.06, -0.02, 3, "seeds"),
    ("base", "capture", 0.0, float("nan"), float("nan"), 0, "definition"),
]
COLUMNS = ["variant", "metric", "mean", "low", "high", "n", "kind"]


def write(repo: Path, rows: list[tuple], rate: str = "1.0") -> None:
    tables = repo / "reports" / "tables"
    tables.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows, columns=COLUMNS).to_csv(
        tables / f"decomposition_rate{rate}.csv", index=False
    )


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    def tables(root: Path) -> None:
        write(root, ROWS)
        write(root, ROWS, rate="0.5")

    return committed_repo(tmp_path, monkeypatch, tables)


def test_fresh_values_inside_the_committed_intervals_pass(repo: Path) -> None:
    fresh = [(*row[:2], row[2] + 0.01, *row[3:]) for row in ROWS]  # another machine's digits
    write(repo, fresh)
    verdicts = check_reports(repo / "reports", repo)
    assert len(verdicts) == 4  # 2 metrics with an interval × 2 rates; the definition row has none
    assert all(v.inside for v in verdicts)
    result = CliRunner().invoke(app, ["check"])
    assert result.exit_code == 0, result.output
    assert (
        "per rate: 4 of 4 seed means (2 rates) lie inside the committed run's intervals (HEAD)"
        in result.output
    )
    assert (
        "exit rule: an unchanged rerun puts up to 2 of these 4 values outside 99% of the time"
        in (result.output)
    )
    assert "0 verdicts reversed" in result.output


def test_one_metric_outside_is_what_a_rerun_does_and_passes(repo: Path) -> None:
    perturbed = list(ROWS)
    perturbed[0] = ("token_mean", "capture", 0.95, 0.90, 1.00, 3, "seeds")
    write(repo, perturbed)
    result = CliRunner().invoke(app, ["check"])
    assert result.exit_code == 0, result.output
    assert "decomposition_rate1.0.csv: token_mean capture = 0.9500 OUTSIDE [0.7000, 0.8000]" in (
        result.output
    )
    assert "3 of 4 seed means" in result.output


def test_a_changed_run_fails(repo: Path) -> None:
    moved = [(r[0], r[1], r[2] + 1.0, *r[3:]) for r in ROWS]
    write(repo, moved)
    write(repo, moved, rate="0.5")
    result = CliRunner().invoke(app, ["check"])
    assert result.exit_code == 1
    assert "0 of 4 seed means" in result.output


def test_a_reversed_verdict_fails(repo: Path) -> None:
    def verdicts(word: str) -> None:
        row = {"rate": 1.0, "metric": "capture", "a": "x", "b": "token_mean", "verdict": word}
        pd.DataFrame([row]).to_csv(repo / "reports" / "tables" / "verdicts.csv", index=False)

    verdicts("better")
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True)
    subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "v"],
        check=True,
    )
    verdicts("worse")
    result = CliRunner().invoke(app, ["check"])
    assert result.exit_code == 1
    assert "REVERSED: x − token_mean on capture at C = 1: better in the committed run" in (
        result.output
    )
    verdicts("undetermined")  # a verdict that only loses its separation is what reruns do
    assert CliRunner().invoke(app, ["check"]).exit_code == 0


def test_an_unchanged_rerun_passes_at_the_stated_rate() -> None:
    """Honest reruns drawn from one model (capture and I^θ perfectly correlated, G^marg apart)
    pass at least about PASS_LEVEL of the time (150 of 150 here: the correlation estimated from 3
    seeds makes the threshold conservative)."""
    rng = np.random.default_rng(1)
    metrics = ["capture", "z_information", "marginal_gain"]
    passed, reps = 0, 150
    for _ in range(reps):
        verdicts, rows = [], []
        for cell in range(12):
            base = rng.standard_normal((2, 3, 2))  # (run, seed, independent part)
            runs = np.stack([base[..., 0], 0.9 * base[..., 0], base[..., 1]], axis=-1)
            committed, fresh = runs
            half = 4.302652729911275 * committed.std(axis=0, ddof=1) / math.sqrt(3)
            for k, metric in enumerate(metrics):
                mean = committed[:, k].mean()
                verdicts.append(
                    Verdict(
                        "decomposition_rate1.0.csv", f"v{cell}", metric, fresh[:, k].mean(),
                        mean - half[k], mean + half[k], 0.9, 3, 3,
                    )
                )  # fmt: skip
            rows += [
                {"variant": f"v{cell}", "rate": 1.0, **dict(zip(metrics, seed, strict=True))}
                for seed in committed
            ]
        null = null_outside_counts(verdicts, pd.DataFrame(rows), 0.95, draws=1000)
        threshold = np.quantile(null, PASS_LEVEL, method="higher")
        passed += sum(not v.inside for v in verdicts) <= threshold
    assert passed / reps >= 0.95


def test_no_fresh_report_is_a_one_line_error(tmp_path: Path, monkeypatch) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["check"])
    assert result.exit_code == 2
    assert "no decomposition_rate*.csv (run `make repro` first)" in result.output


def test_inside_probability_for_another_draw_of_the_same_seeds() -> None:
    # n = 3 on both sides: P(|t_2| <= t_{0.975,2}/sqrt(2)); t_2's CDF is 1/2 + x/(2 sqrt(2 + x^2))
    x = 4.302652729911275 / math.sqrt(2.0)
    assert inside_probability(3, 3, 0.95) == pytest.approx(x / math.sqrt(2.0 + x * x), abs=1e-9)
    assert inside_probability(3, 3, 0.95) == pytest.approx(0.906820, abs=1e-6)
    # a fresh mean known exactly (n_fresh -> infinity): the interval's own coverage
    assert inside_probability(3, 10**12, 0.95) == pytest.approx(0.95, abs=1e-9)
    assert inside_probability(8, 3, 0.95) < inside_probability(3, 3, 0.95) < 0.95

    # and by simulation: two runs of 3 normal seed values each
    rng = np.random.default_rng(0)
    committed, fresh = rng.normal(size=(2, 200_000, 3))
    half = 4.302652729911275 * committed.std(axis=1, ddof=1) / math.sqrt(3)
    inside = np.abs(fresh.mean(axis=1) - committed.mean(axis=1)) <= half
    assert inside.mean() == pytest.approx(inside_probability(3, 3, 0.95), abs=0.003)


def test_a_committed_run_without_its_confidence_is_a_one_line_error(repo: Path) -> None:
    subprocess.run(["git", "-C", str(repo), "rm", "-q", "params.yaml"], check=True)
    subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"],
        check=True,
    )
    write(repo, ROWS)
    result = CliRunner().invoke(app, ["check"])
    assert result.exit_code == 2
    assert "params.yaml at HEAD: no report.confidence" in result.output
