"""studies.plateau: the top group it reads and the rows it writes."""

from __future__ import annotations

import json

import pytest

from studies.plateau.plateau import markdown, top_group


def test_the_top_group_and_headline_come_from_the_completed_report(tmp_path) -> None:
    tables = tmp_path / "reports" / "tables"
    tables.mkdir(parents=True)
    (tables / "plateau.csv").write_text(
        "variant,step_from,step_to,capture_change,members\n"
        "a,300,400,0.02,\n"
        'top group,300,400,0.03,"a, b"\n'
    )
    (tmp_path / "reports" / "metrics.json").write_text(json.dumps({"headline_rate": 1.0}))
    assert top_group(tmp_path) == (["a", "b"], 1.0)
    (tables / "plateau.csv").write_text("variant,members\na,\n")
    with pytest.raises(SystemExit, match="no 'top group' row"):
        top_group(tmp_path)


def test_each_steps_value_gets_its_plateau_call_and_cost_ratio() -> None:
    rows = [
        {
            "steps": 400,
            "step_from": 300,
            "capture_change": 0.042,
            "plateau": False,
            "capture": 0.5,
            "seconds": 20.0,
        },
        {
            "steps": 600,
            "step_from": 450,
            "capture_change": -0.004,
            "plateau": True,
            "capture": 0.6,
            "seconds": 31.0,
        },
    ]
    text = markdown(rows, ["a", "b"], 1.0, "python -m studies.plateau.plateau R")
    assert "| 400 | 300–400 | +0.042 | no | 0.500 | 20.0 | 1.00 |" in text
    assert "| 600 | 450–600 | -0.004 | yes | 0.600 | 31.0 | 1.55 |" in text
    assert "The top group (a, b) at C = 1" in text


def test_a_schedule_row_gives_both_windows_and_each_capture() -> None:
    from studies.plateau.schedule import markdown as schedule_markdown
    from studies.plateau.schedule import parse_schedule

    def top(start: float, end: float, change: float, window: tuple[int, int]) -> dict:
        return {
            "z_information_from": start,
            "z_information_to": end,
            "capture_change": change,
            "step_from": window[0],
            "step_to": window[1],
            "plateau": abs(change) <= 0.01,
        }

    late = top(0.5, 0.55, 0.05, (1500, 2250))  # the quarter before a penalty from 0.75
    rows = [
        ("0.75:0.1", {"last": top(0.55, 0.6, 0.05, (2250, 3000)), "rule": late,
                      "capture": {"a": 0.61, "b": 0.5}, "rate": 1.0}),
        ("0.5:0.01", {"last": top(0.7, 0.704, 0.004, (2250, 3000)),
                      "rule": top(0.7, 0.704, 0.004, (2250, 3000)),
                      "capture": {"a": 0.8, "b": 0.75}, "rate": 1.0}),
    ]  # fmt: skip
    text = schedule_markdown(rows, ["a", "b"], 3000, "python -m studies.plateau.schedule R")
    assert "| 0.75 | 0.1 | 0.550 → 0.600 | +0.050 | steps 1500–2250 | +0.050 | no | 0.610 |" in text
    settled = "| 0.5 | 0.01 | 0.700 → 0.704 | +0.004 | steps 2250–3000 | +0.004 | yes | 0.800 |"
    assert settled in text
    assert "(a, b) at C = 1, seed 0, 3000 steps" in text
    assert parse_schedule("0.5:0.01") == (0.5, 0.01)
    with pytest.raises(Exception, match="expected penalty_from:min_lr_ratio"):
        parse_schedule("0.5")
