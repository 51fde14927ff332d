"""`zgain check` on the comparisons over bases (tables/procedure.csv)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from conftest import committed_repo
from typer.testing import CliRunner

from zgain.cli.app import app
from zgain.cli.check import inside_probability, procedure_verdicts

DECOMPOSITION = pd.DataFrame(
    [("token_mean", "capture", 0.75, 0.70, 0.80, 3, "seeds")],
    columns=["variant", "metric", "mean", "low", "high", "n", "kind"],
)
PROCEDURE_COLUMNS = ["a", "b", "rate", "metric", "mean", "low", "high", "n"]
COMMITTED = [
    ("mean_tok", "token_mean", 1.0, "capture", -0.02, -0.10, 0.06, 5),
    ("dist_normalized", "token_mean", 1.0, "capture", 0.01, -0.03, 0.05, 5),
    ("mean_tok", "token_mean", 1.0, "marginal_gain", -0.07, float("nan"), float("nan"), 1),
]


def write(repo: Path, rows: list[tuple]) -> None:
    tables = repo / "reports" / "tables"
    tables.mkdir(parents=True, exist_ok=True)
    DECOMPOSITION.to_csv(tables / "decomposition_rate1.0.csv", index=False)
    pd.DataFrame(rows, columns=PROCEDURE_COLUMNS).to_csv(tables / "procedure.csv", index=False)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return committed_repo(tmp_path, monkeypatch, lambda root: write(root, COMMITTED))


def test_each_comparison_with_an_interval_is_checked_over_the_bases(repo: Path) -> None:
    fresh = [list(r) for r in COMMITTED]
    fresh[0][4] = 0.07  # outside [-0.10, 0.06]
    fresh[1][4] = 0.04  # inside [-0.03, 0.05]
    write(repo, [tuple(r) for r in fresh])
    verdicts = procedure_verdicts(repo / "reports", repo, "HEAD")
    # the row without a committed interval (one base) is not checked
    assert [(v.variant, v.metric, v.inside) for v in verdicts] == [
        ("mean_tok − token_mean C = 1.0", "capture", False),
        ("dist_normalized − token_mean C = 1.0", "capture", True),
    ]
    # five bases on each side: P(|t_4| <= t_{0.975,4}/sqrt 2)
    assert verdicts[0].expected == pytest.approx(inside_probability(5, 5, 0.95))
    assert 0.85 < verdicts[0].expected < 0.92


def test_the_check_prints_the_count_over_bases_beside_its_expectation(repo: Path) -> None:
    fresh = [list(r) for r in COMMITTED]
    fresh[0][4] = 0.07
    write(repo, [tuple(r) for r in fresh])
    result = CliRunner().invoke(app, ["check"])
    expected = 2 * inside_probability(5, 5, 0.95)
    assert "procedure.csv: mean_tok − token_mean C = 1.0 capture = 0.0700 OUTSIDE" in (
        result.output
    )
    assert (
        f"over bases: 1 of 2 comparisons lie inside the committed intervals over 5 bases; a "
        f"rerun that redraws every base puts {expected:.1f} inside on average" in result.output
    )


def test_a_report_without_bases_checks_none(repo: Path) -> None:
    (repo / "reports" / "tables" / "procedure.csv").unlink()
    assert procedure_verdicts(repo / "reports", repo, "HEAD") == []
    output = CliRunner().invoke(app, ["check"]).output
    assert "over bases: no comparison has a committed interval (fewer than 2 bases)" in output
