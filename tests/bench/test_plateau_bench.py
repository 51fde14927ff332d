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
