"""The cross-world view: agreement of verdicts across worlds, the long table, the Markdown and
the command's errors."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from zgain.cli.app import app
from zgain.sweep.side_by_side import (
    DIFFERS,
    FLIPS,
    HOLDS,
    OPEN,
    World,
    agreement,
    interval_level,
    verdicts_across,
    view_markdown,
    worlds_table,
)

PROCEDURE = ["a", "b", "rate", "metric", "mean", "low", "high", "n", "verdict"]


def world(name: str, rows: list[tuple], oracle: list[float], prefix: int = 0) -> World:
    positions = pd.DataFrame(
        [("oracle", t, v) for t, v in enumerate(oracle)], columns=["variant", "position", "mean"]
    )
    params = {"data": {"prefix": prefix, "decoy_positions": [], "decoy_noise": 0.0}}
    params["base"] = {"seeds": [0, 1, 2], "max_steps": 300 if name == "late" else 4500}
    return World(name, params, pd.DataFrame(rows, columns=PROCEDURE), positions, sum(oracle))


DEFAULT = world(
    "default",
    [
        ("token_sum", "token_mean", 1.0, "capture", -0.07, -0.2, 0.05, 3, "undetermined"),
        ("token_share", "token_mean", 1.0, "capture", -0.9, -1.0, -0.8, 3, "worse"),
        ("mean_tok", "token_mean", 1.0, "capture", 0.1, 0.06, 0.14, 3, "better"),
        ("mean_cc", "token_mean", 1.0, "capture", 0.0, -0.01, 0.01, 3, "equivalent"),
    ],
    [0.75, 0.1, 0.05],
)
LATE = world(
    "late",
    [
        ("token_sum", "token_mean", 1.0, "capture", -0.01, -0.1, 0.08, 3, "undetermined"),
        ("token_share", "token_mean", 1.0, "capture", -0.7, -0.8, -0.6, 3, "worse"),
        ("mean_tok", "token_mean", 1.0, "capture", -0.1, -0.14, -0.06, 3, "worse"),
        ("mean_cc", "token_mean", 1.0, "capture", 0.2, 0.1, 0.3, 3, "better"),
        ("mean_ex", "token_mean", 1.0, "capture", 0.0, -0.01, 0.01, 3, "equivalent"),
    ],
    [-1e-17, 0.0, 0.8],
    prefix=2,
)


@pytest.mark.parametrize(
    ("verdicts", "expected"),
    [
        (["worse", "worse", "worse"], HOLDS),
        (["equivalent", "equivalent"], HOLDS),
        (["better", "undetermined", "worse"], FLIPS),
        (["worse", "undetermined"], DIFFERS),
        (["equivalent", "better"], DIFFERS),
        (["undetermined", "undetermined"], OPEN),
    ],
)
def test_agreement_names_how_the_worlds_agree(verdicts: list[str], expected: str) -> None:
    assert agreement(verdicts) == expected


def test_only_comparisons_on_every_world_are_laid_side_by_side() -> None:
    across = verdicts_across([DEFAULT, LATE])
    per = across.drop_duplicates(["a", "b"]).set_index("a")["agreement"]
    # mean_ex is on one world only
    assert sorted(per.index) == ["mean_cc", "mean_tok", "token_share", "token_sum"]
    assert per.to_dict() == {
        "token_sum": OPEN,
        "token_share": HOLDS,
        "mean_tok": FLIPS,
        "mean_cc": DIFFERS,
    }
    assert across.groupby("a")["world"].agg(list)["mean_tok"] == ["default", "late"]


def test_the_first_token_share_is_mean_i0_over_mean_info() -> None:
    table = worlds_table([DEFAULT, LATE]).set_index("world")
    assert table.loc["default", "first_token_share"] == pytest.approx(0.75 / 0.9)
    assert table.loc["late", "first_token_share"] == 0.0  # −1e-17 is float rounding of 0
    assert table.loc["late", "oracle_by_position"] == "0.000 0.000 0.800"
    assert table.loc["late", "knobs"] == "prefix 2, decoy_positions [], decoy_noise 0.0"


def test_the_view_says_where_a_verdict_flips() -> None:
    text = view_markdown([DEFAULT, LATE], verdicts_across([DEFAULT, LATE]), "zgain worlds-report")
    better = next(line for line in text.splitlines() if line.startswith("- Better"))
    assert better == (
        "- Better than b on some world: mean_cc − token_mean (capture, C = 1) on late; "
        "mean_tok − token_mean (capture, C = 1) on default."
    )
    flips = next(line for line in text.splitlines() if line.startswith("- Flip"))
    assert "mean_tok − token_mean (capture, C = 1: better on default, worse on late)" in flips
    assert "| mean_tok − token_mean | better 0.100 [0.060, 0.140] | worse -0.100" in text


def write_world(folder: Path, w: World) -> Path:
    tables = folder / "tables"
    tables.mkdir(parents=True)
    (folder / "params.yaml").write_text(yaml.safe_dump(dict(w.params)))
    w.procedure.to_csv(tables / "procedure.csv", index=False)
    w.positions.to_csv(tables / "information_by_position.csv", index=False)
    pd.DataFrame({"oracle_info": [w.oracle_info] * 2}).to_csv(tables / "runs.csv", index=False)
    # two rows per base (two rates): the excess counts once per base
    excess = {"base": [0, 0, 1, 1, 2, 2], "test_excess_nats": [0.1, 0.1, 0.2, 0.2, 0.6, 0.6]}
    pd.DataFrame(excess).to_csv(tables / "bases.csv", index=False)
    return folder


def test_the_command_writes_the_view_and_names_a_missing_table(tmp_path: Path) -> None:
    default = write_world(tmp_path / "default", DEFAULT)
    late = write_world(tmp_path / "late", LATE)
    out = tmp_path / "view"
    result = CliRunner().invoke(app, ["worlds-report", "--out", str(out), str(default), str(late)])
    assert result.exit_code == 0, result.output
    assert pd.read_csv(out / "verdicts.csv")["world"].tolist().count("late") == 4
    assert "i*_t by position" in (out / "summary.md").read_text()
    shown = pd.read_csv(out / "worlds.csv")
    assert shown["test_excess"].tolist() == pytest.approx([0.3, 0.3])  # (0.1 + 0.2 + 0.6) / 3
    assert shown["base_max_steps"].astype(str).tolist() == ["4500", "300"]
    (late / "tables" / "procedure.csv").unlink()
    result = CliRunner().invoke(app, ["worlds-report", "--out", str(out), str(default), str(late)])
    assert result.exit_code == 2
    assert "procedure.csv" in result.output and "missing" in result.output
    result = CliRunner().invoke(app, ["worlds-report", "--out", str(out), str(default)])
    assert result.exit_code == 2
    assert "needs at least 2 worlds, got 1" in result.output


def test_the_cells_name_each_worlds_interval_level() -> None:
    at = [(w, {**w.params, "report": {"confidence": 0.9}}) for w in (DEFAULT,)]
    ninety = [World(w.name, p, w.procedure, w.positions, w.oracle_info) for w, p in at]
    assert interval_level(ninety) == "90% interval"
    assert interval_level([DEFAULT]) == "interval at each world's report.confidence"
