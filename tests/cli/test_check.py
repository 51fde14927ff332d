"""`zgain check`: a fresh report against the committed one, metric by metric."""

from __future__ import annotations

import math
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from zgain.cli.app import app
from zgain.cli.check import check_reports, inside_probability

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
    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(tmp_path), *args], check=True, capture_output=True)

    git("init", "-q")
    (tmp_path / "params.yaml").write_text("report:\n  confidence: 0.95\n")
    write(tmp_path, ROWS)
    write(tmp_path, ROWS, rate="0.5")
    git("add", "-A")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "committed run")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_fresh_values_inside_the_committed_intervals_pass(repo: Path) -> None:
    fresh = [(*row[:2], row[2] + 0.01, *row[3:]) for row in ROWS]  # another machine's digits
    write(repo, fresh)
    verdicts = check_reports(repo / "reports", repo)
    assert len(verdicts) == 4  # 2 metrics with an interval × 2 rates; the definition row has none
    assert all(v.inside for v in verdicts)
    result = CliRunner().invoke(app, ["check"])
    assert result.exit_code == 0, result.output
    assert (
        "4 of 4 metrics (2 rates) lie inside the committed run's intervals (HEAD); 3.6 would if "
        "the fresh run were another draw of the committed run's seeds" in result.output
    )


def test_a_perturbed_metric_fails_naming_it(repo: Path) -> None:
    perturbed = list(ROWS)
    perturbed[0] = ("token_mean", "capture", 0.95, 0.90, 1.00, 3, "seeds")
    write(repo, perturbed)
    result = CliRunner().invoke(app, ["check"])
    assert result.exit_code == 1
    assert "decomposition_rate1.0.csv: token_mean capture = 0.9500 OUTSIDE [0.7000, 0.8000]" in (
        result.output
    )
    assert "3 of 4 metrics" in result.output


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
