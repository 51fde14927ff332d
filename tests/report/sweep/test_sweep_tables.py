"""Sweep reports from `dvc exp show` rows: changed params, rows per variant, the family map."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from zgain.cli.app import app
from zgain.cvae.terms import POSITIONS
from zgain.report.render.markdown import frame_table
from zgain.sweep.tables import (
    SweepError,
    build_sweep,
    family_place,
    family_points,
    named_points,
)


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
        "cvae.variants.mean_tok.weights.mean": 1.0,
        "cvae.variants.mean_tok.weights.tok": 1.0,
        "variants.mean_tok.z_information": 0.4,
        "variants.mean_tok.capture": 0.45,
        "variants.mean_tok.marginal_gain": -0.05,
        "variants.mean_tok.kl": 1.0,
        "variants.mean_tok.normalized_recovery": 0.3,
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
    assert len(sweep.rows) == 9  # 3 experiments × 3 variants; the baseline row is left out
    row = sweep.rows[(sweep.rows["experiment"] == "c") & (sweep.rows["variant"] == "family")]
    assert row["capture"].item() == 0.8 and row["cvae.variants.family.unified.gamma"].item() == 1.0
    assert sweep.oracle_info == 0.9


def test_no_experiment_is_an_error() -> None:
    with pytest.raises(SweepError, match="no finished experiment"):
        build_sweep([BASELINE])
    failed = {**exp_row("x", None, 0.0, 0.0), "State": "Failed"}
    with pytest.raises(SweepError, match="no finished experiment"):
        build_sweep([BASELINE, failed])


def runs_of(rev: str) -> pd.DataFrame:
    """A fake runs table for experiment `rev`: two seeds at two rates, the family's capture
    its metrics value plus 0.1 per rate step and ± 0.02 across seeds (mean: the value)."""
    row = next(r for r in ROWS if r["rev"] == rev)
    records = []
    for variant in ("token_sum", "family", "mean_tok"):
        base = row.get(f"variants.{variant}.capture", 0.3)
        for step, rate in enumerate((0.5, 1.0)):
            for seed, spread in ((0, -0.02), (1, 0.02)):
                capture = base + 0.1 * (step - 1) + spread
                records.append((variant, rate, seed, capture, -0.01 * step))
    return pd.DataFrame(records, columns=["variant", "rate", "seed", "capture", "marginal_gain"])


def test_family_points_per_rate_and_named_positions() -> None:
    points = family_points(ROWS, runs_of)
    headline = points[points["rate"] == 1.0]
    assert headline[["alpha", "gamma"]].values.tolist() == [[-1.0, 0.0], [1.0, 0.0], [1.0, 1.0]]
    assert headline["capture"].tolist() == pytest.approx([0.6, 0.7, 0.8])
    lower = points[points["rate"] == 0.5]
    assert lower["capture"].tolist() == pytest.approx([0.5, 0.6, 0.7])
    assert set(points["n"]) == {2}
    named = named_points(ROWS, runs_of)
    tok = POSITIONS["tok"]
    additive = f"{tok.note}; additive: 1·mean + 1·tok".lstrip("; ")
    assert named[["variant", "term", "alpha", "gamma", "note", "rate"]].values.tolist() == [
        ["token_sum", "sum", 0.0, 0.0, "token-sum", 0.5],
        ["token_sum", "sum", 0.0, 0.0, "token-sum", 1.0],
        ["mean_tok", "tok", tok.alpha, tok.gamma, additive, 0.5],
        ["mean_tok", "tok", tok.alpha, tok.gamma, additive, 1.0],
    ]
    assert named["capture"].tolist() == pytest.approx([0.45, 0.55, 0.35, 0.45])
    # n is a count of seeds: an integer column, written "2", not "2.000"
    for table in (points, named):
        assert table["n"].dtype.kind == "i" and set(table["n"]) == {2}
    assert "| 2 |" in frame_table(named) and "2.000" not in frame_table(named)


def test_a_variant_the_runs_table_lacks_keeps_its_cell_as_undefined() -> None:
    def without_family(rev: str) -> pd.DataFrame:
        runs = runs_of(rev)
        return runs[runs["variant"] != "family"]

    points = family_points(ROWS, without_family)
    assert len(points) == 6 and points["capture"].isna().all() and set(points["n"]) == {0}


def test_an_additive_variant_sits_at_its_added_term() -> None:
    assert family_place({"mean": 1.0, "tok": 0.5}) == ("tok", "additive: 1·mean + 0.5·tok")
    assert family_place({"sum": 1.0}) == ("sum", "token-sum")
    assert family_place({"mean": 1.0, "ex": 1.0, "tok": 1.0}) is None
    assert family_place({"unified": 1.0}) is None


def test_help_says_what_each_command_does() -> None:
    runner = CliRunner()
    top = runner.invoke(app, ["--help"])
    assert top.exit_code == 0 and "sweep-report" in top.output
    sub = runner.invoke(app, ["sweep-report", "--help"])
    assert sub.exit_code == 0 and "dvc exp show" in sub.output


def test_sweep_report_writes_tables_and_figures(tmp_path: Path, monkeypatch) -> None:
    import dvc.api

    monkeypatch.setattr(dvc.api, "exp_show", lambda repo=".": ROWS)

    def read(path: str, repo: str, rev: str) -> str:
        assert path == "reports/tables/runs.csv", path
        return runs_of(rev).to_csv(index=False)

    monkeypatch.setattr(dvc.api, "read", read)
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
    family = (out / "family.md").read_text()
    assert family.index("## C = 0.5\n") < family.index("## C = 1 (the headline rate)\n")
    assert "| family | 1.000 | 1.000 | 0.800 | -0.010 |" in family.split("## C = 1 ")[1]
    monkeypatch.setattr(dvc.api, "exp_show", lambda repo=".": [BASELINE])
    empty = CliRunner().invoke(app, ["sweep-report", "--out", str(tmp_path / "none")])
    assert empty.exit_code == 2 and "no finished experiment" in empty.output


def test_rows_without_report_metrics_get_them_from_the_experiments_metrics_json() -> None:
    from zgain.sweep.tables import with_report_metrics

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
