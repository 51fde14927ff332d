"""The stability view (zgain.sweep.side_by_side, `zgain stability-report`): which verdicts over
bases hold at every step count, from hand-made procedure tables."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import yaml
from typer.testing import CliRunner

from zgain.cli.app import app
from zgain.sweep.side_by_side import Trained, stability_markdown, stability_table

COLUMNS = ["a", "b", "rate", "metric", "mean", "low", "high", "n", "verdict"]


def procedure(*verdicts: tuple[str, str, str]) -> pd.DataFrame:
    """(a, metric, verdict) rows against token_mean at C = 1."""
    rows = [(a, "token_mean", 1.0, m, 0.1, 0.0, 0.2, 4, v) for a, m, v in verdicts]
    return pd.DataFrame(rows, columns=COLUMNS)


SHORT = procedure(
    ("mean_cc", "capture", "better"),
    ("token_sum", "capture", "worse"),
    ("mean_tok", "capture", "undetermined"),
    ("mean_cc", "marginal_gain", "worse"),
)
LONG = procedure(
    ("mean_cc", "capture", "undetermined"),
    ("token_sum", "capture", "worse"),
    ("mean_tok", "capture", "undetermined"),
    ("mean_cc", "marginal_gain", "better"),
)


def test_each_comparison_says_whether_its_verdict_holds_at_every_step_count() -> None:
    runs = [Trained("default", 400, 0.95, SHORT), Trained("steps600", 600, 0.95, LONG)]
    table = stability_table(runs)
    agreement = table.drop_duplicates(["a", "metric"]).set_index(["a", "metric"])["agreement"]
    assert agreement[("token_sum", "capture")] == "holds"
    assert agreement[("mean_cc", "capture")] == "differs"
    assert agreement[("mean_cc", "marginal_gain")] == "flips"
    assert agreement[("mean_tok", "capture")] == "open"
    text = stability_markdown(runs, table, "zgain stability-report")
    assert "- 1 hold at every step count: token_sum − token_mean (capture, C = 1: worse at " in (
        text
    )
    assert "- 1 change with the steps (decided at some step counts only, or " in text
    assert "| comparison | 400 steps | 600 steps | across steps |" in text
    assert "Each cell: verdict, a − b [95% interval]." in text


def write_run(folder: Path, steps: int, table: pd.DataFrame) -> Path:
    (folder / "tables").mkdir(parents=True)
    table.to_csv(folder / "tables" / "procedure.csv", index=False)
    params = {"cvae": {"common": {"steps": steps}}, "report": {"confidence": 0.95}}
    (folder / "params.yaml").write_text(yaml.safe_dump(params))
    return folder


def test_the_command_writes_the_view_and_refuses_one_step_count(tmp_path: Path) -> None:
    short = write_run(tmp_path / "reports", 400, SHORT)
    (tmp_path / "reports" / "params.yaml").rename(tmp_path / "params.yaml")  # a repository's
    long = write_run(tmp_path / "steps600", 600, LONG)
    out = tmp_path / "view"
    result = CliRunner().invoke(app, ["stability-report", "--out", str(out), str(long), str(short)])
    assert result.exit_code == 0, result.output
    verdicts = pd.read_csv(out / "verdicts.csv")
    assert list(dict.fromkeys(verdicts["run"])) == ["400 steps", "600 steps"]
    twice = CliRunner().invoke(app, ["stability-report", "--out", str(out), str(short), str(short)])
    assert twice.exit_code == 2 and "distinct steps, got steps [400, 400]" in twice.output
    missing = CliRunner().invoke(
        app, ["stability-report", "--out", str(out), str(short), str(tmp_path / "none")]
    )
    assert missing.exit_code == 2 and "missing" in missing.output
