"""`zgain check`: a fresh report against the committed one, metric by metric."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from zgain.cli.app import app
from zgain.cli.check import check_reports

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
        "4 of 4 metrics (2 rates) lie inside the committed run's intervals (HEAD)" in result.output
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
