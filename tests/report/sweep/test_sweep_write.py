"""`zgain sweep-report`'s output folder and its baseline: replaced whole, named or refused."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from zgain.cli.app import app

BASE = {"Experiment": None, "rev": "main", "typ": "baseline", "cvae.variants.a.beta": None}
EXPS = [
    {**BASE, "Experiment": f"exp{i}", "rev": f"r{i}", "typ": "branch_commit", "State": None,
     "cvae.variants.a.beta": beta}
    for i, beta in enumerate((0.1, 0.2))
]  # fmt: skip


def fake_dvc(monkeypatch: pytest.MonkeyPatch, repo: Path) -> None:
    import dvc.api

    runs = pd.DataFrame(
        [{"variant": "a", "rate": 1.0, "seed": s, "capture": 0.5 + 0.01 * s, "kl": 1.0,
          "z_information": 0.4, "marginal_gain": 0.0, "normalized_recovery": 0.2}
         for s in range(3)]
    ).to_csv(index=False)  # fmt: skip
    metrics = {"headline_rate": 1.0, "oracle_info": 0.9, "variants": {"a": {
        "capture": 0.5, "z_information": 0.4, "marginal_gain": 0.0, "kl": 1.0,
        "normalized_recovery": 0.2}}}  # fmt: skip

    def read(path: str, repo: str, rev: str) -> str:
        return runs if path.endswith("runs.csv") else json.dumps(metrics)

    monkeypatch.setattr(dvc.api, "exp_show", lambda repo: [BASE, *EXPS])
    monkeypatch.setattr(dvc.api, "read", read)
    (repo / "params.yaml").write_text("report:\n  equivalence: {capture: 0.05}\n")


def test_an_unknown_baseline_exits_2_and_writes_nothing(tmp_path, monkeypatch) -> None:
    fake_dvc(monkeypatch, tmp_path)
    out = tmp_path / "sweep"
    result = CliRunner().invoke(
        app, ["sweep-report", "--out", str(out), "--repo", str(tmp_path), "--baseline", "nope"]
    )
    assert result.exit_code == 2
    assert "error: " in result.output and "nope" in result.output
    assert not out.exists()


def test_the_output_folder_is_replaced_whole(tmp_path, monkeypatch) -> None:
    fake_dvc(monkeypatch, tmp_path)
    out = tmp_path / "sweep"
    out.mkdir()
    (out / "comparison.md").write_text("stale")
    (out / "old.csv").write_text("stale")
    result = CliRunner().invoke(app, ["sweep-report", "--out", str(out), "--repo", str(tmp_path)])
    assert result.exit_code == 0, result.output
    names = {p.name for p in out.iterdir()}
    assert "old.csv" not in names and "table.md" in names
    assert "stale" not in (out / "comparison.md").read_text()
