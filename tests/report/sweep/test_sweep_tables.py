"""Sweep reports from `dvc exp show` rows: changed params, rows per variant, the family map."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from zgain.cli.app import app
from zgain.report.sweep.tables import SweepError, build_sweep, family_points, named_points


def exp_row(name: str, alpha: float | None, gamma: float, capture: float) -> dict:
    """A flattened `dvc exp show` row: a named variant and, when alpha is given, a family one."""
    row = {
        "Experiment": name,
        "rev": name[:7],
        "typ": "branch_commit",
        "State": "Success",
        "headline_rate": 1.0,
        "oracle_info": 0.9,
        "cvae.rates": [1.0],
        "cvae.variants.token_sum.weights.sum": 1.0,
        "variants.token_sum.z_information": 0.5,
        "variants.token_sum.capture": 0.55,
        "variants.token_sum.marginal_gain": -0.01,
        "variants.token_sum.kl": 1.0,
        "variants.token_sum.normalized_recovery": 0.4,
    }
    if alpha is not None:
        row |= {
            "cvae.variants.family.weights.unified": 1.0,
            "cvae.variants.family.unified.alpha": alpha,
            "cvae.variants.family.unified.gamma": gamma,
            "variants.family.z_information": capture * 0.9,
            "variants.family.capture": capture,
            "variants.family.marginal_gain": 0.01 * alpha,
            "variants.family.kl": 1.02,
            "variants.family.normalized_recovery": 0.3,
        }
    return row


BASELINE = {"Experiment": None, "rev": "workspace", "typ": "baseline", "headline_rate": 1.0}
ROWS = [
    BASELINE,
    exp_row("a", -1.0, 0.0, 0.6),
    exp_row("b", 1.0, 0.0, 0.7),
    exp_row("c", 1.0, 1.0, 0.8),
]


def test_rows_per_experiment_and_variant_with_the_changed_params() -> None:
    sweep = build_sweep(ROWS)
    assert sweep.changed == (
        "cvae.variants.family.unified.alpha",
        "cvae.variants.family.unified.gamma",
    )
    assert len(sweep.rows) == 6  # 3 experiments × 2 variants; the baseline row is left out
    row = sweep.rows[(sweep.rows["experiment"] == "c") & (sweep.rows["variant"] == "family")]
    assert row["capture"].item() == 0.8 and row["cvae.variants.family.unified.gamma"].item() == 1.0
    assert sweep.oracle_info == 0.9


def test_no_experiment_is_an_error() -> None:
    with pytest.raises(SweepError, match="no finished experiment"):
        build_sweep([BASELINE])
    failed = {**exp_row("x", None, 0.0, 0.0), "State": "Failed"}
    with pytest.raises(SweepError, match="no finished experiment"):
        build_sweep([BASELINE, failed])


def test_family_points_and_named_positions() -> None:
    points = family_points(ROWS)
    assert points[["alpha", "gamma", "capture"]].values.tolist() == [
        [-1.0, 0.0, 0.6],
        [1.0, 0.0, 0.7],
        [1.0, 1.0, 0.8],
    ]
    named = named_points(ROWS)
    assert named[["variant", "term", "alpha", "gamma", "note"]].values.tolist() == [
        ["token_sum", "sum", 0.0, 0.0, "token-sum"]
    ]
    assert named["capture"].item() == pytest.approx(0.55)


def test_help_says_what_each_command_does() -> None:
    runner = CliRunner()
    top = runner.invoke(app, ["--help"])
    assert top.exit_code == 0 and "sweep-report" in top.output
    sub = runner.invoke(app, ["sweep-report", "--help"])
    assert sub.exit_code == 0 and "dvc exp show" in sub.output


def test_sweep_report_writes_tables_and_figures(tmp_path: Path, monkeypatch) -> None:
    import dvc.api

    monkeypatch.setattr(dvc.api, "exp_show", lambda repo=".": ROWS)
    out = tmp_path / "sweep"
    result = CliRunner().invoke(app, ["sweep-report", "--out", str(out)])
    assert result.exit_code == 0, result.output
    names = {p.name for p in out.iterdir()}
    assert names == {
        "table.md",
        "table.csv",
        "frontier.png",
        "family.md",
        "family.csv",
        "family.png",
    }
    row = "| c | 1.000 | 1.000 | family | 1.000 | 0.720 | 0.800 |"
    assert row in (out / "table.md").read_text()
    monkeypatch.setattr(dvc.api, "exp_show", lambda repo=".": [BASELINE])
    empty = CliRunner().invoke(app, ["sweep-report", "--out", str(tmp_path / "none")])
    assert empty.exit_code == 2 and "no finished experiment" in empty.output


def test_rows_without_report_metrics_get_them_from_the_experiments_metrics_json() -> None:
    from zgain.report.sweep.tables import with_report_metrics

    bare = {k: v for k, v in exp_row("exp-a", None, 0.0, 0.0).items() if "variants." not in k}
    metrics = {
        "headline_rate": 1.0,
        "oracle_info": 0.9,
        "variants": {"token_sum": {m: 0.5 for m in ("z_information", "capture", "kl")}},
    }
    seen = []

    def read(rev: str) -> dict:
        seen.append(rev)
        return metrics

    (row,) = with_report_metrics([bare], read)
    assert seen == ["exp-a"]
    assert row["variants.token_sum.capture"] == 0.5
    full = exp_row("exp-b", None, 0.0, 0.0)
    assert with_report_metrics([full], read) == [full]  # already there: not read again
    assert seen == ["exp-a"]
