"""Why a run missed its target rate (zgain.results.analysis.controller)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from zgain.core.errors import DataError
from zgain.core.runs import Run
from zgain.results.analysis.controller import (
    CAUSES,
    ControllerEnd,
    by_cause,
    cause_sentence,
    miss_cause,
    read_controller_end,
)

BOUNDS = (1e-4, 10.0)
TOLERANCE = 0.10


def curve(values: dict[int, float], name: str) -> pd.Series:
    return pd.Series(values, name=name).rename_axis("step")


def test_the_end_state_reads_the_last_values_and_the_closing_quarter_of_kl_ema() -> None:
    steps = {25: 3.0, 100: 0.2, 300: 0.9, 325: 1.3, 400: 1.1}
    end = ControllerEnd.of(curve({25: 0.01, 400: 0.05}, "beta"), curve(steps, "kl_ema"))
    # the closing quarter of 400 logged steps is steps >= 300
    assert end == ControllerEnd(beta_end=0.05, kl_ema_end=1.1, kl_ema_low=0.9, kl_ema_high=1.3)
    with pytest.raises(ValueError, match="no logged step"):
        ControllerEnd.of(curve({}, "beta"), curve(steps, "kl_ema"))


@pytest.mark.parametrize(
    ("end", "cause"),
    [
        # logged as float32: 9.999999747378752e-05 is the floor
        (ControllerEnd(9.999999747378752e-05, 0.4, 0.4, 0.6), "beta_floor"),
        (ControllerEnd(10.0 * (1 - 1e-4), 2.5, 2.4, 2.6), "beta_ceiling"),
        # a range of 0.25 is more than twice 10% of C = 1
        (ControllerEnd(0.05, 1.0, 0.85, 1.1), "unsettled"),
        (ControllerEnd(0.05, 1.15, 1.1, 1.2), "drifting"),
        (ControllerEnd(0.05, 1.05, 0.95, 1.15), "saved_weights"),
    ],
)
def test_each_cause_is_the_first_that_holds(end: ControllerEnd, cause: str) -> None:
    assert miss_cause(end, 1.0, *BOUNDS, TOLERANCE) == cause


def test_the_settling_range_scales_with_the_target() -> None:
    end = ControllerEnd(0.05, 2.0, 1.85, 2.2)  # spans 0.35 < 2 · 10% of C = 2, > 2 · 10% of 1
    assert miss_cause(end, 2.0, *BOUNDS, TOLERANCE) == "saved_weights"
    assert miss_cause(ControllerEnd(0.05, 1.0, 0.85, 1.2), 1.0, *BOUNDS, TOLERANCE) == "unsettled"


def test_cause_sentences_fill_in_the_bounds_and_the_tolerance() -> None:
    assert "beta_min = 0.0001" in cause_sentence("beta_floor", BOUNDS, TOLERANCE)
    assert "beta_max = 10" in cause_sentence("beta_ceiling", BOUNDS, TOLERANCE)
    unsettled = cause_sentence("unsettled", BOUNDS, TOLERANCE)
    assert "more than 20% of C over the last 25% of training" in unsettled
    assert "within 10% of C" in cause_sentence("saved_weights", BOUNDS, TOLERANCE)
    assert all("{" not in cause_sentence(c, BOUNDS, TOLERANCE) for c in CAUSES)


def test_flagged_runs_group_by_cause_in_the_order_causes_are_tried() -> None:
    flagged = pd.DataFrame(
        {"cause": ["saved_weights", "beta_floor", "saved_weights"], "seed": [0, 1, 2]}
    )
    groups = by_cause(flagged)
    assert list(groups) == ["beta_floor", "saved_weights"]
    assert groups["saved_weights"]["seed"].tolist() == [0, 2]


def test_a_missing_curve_names_the_file_and_the_stage_to_rerun(tmp_path: Path) -> None:
    run = Run("token_mean", 1.0, 0, 0)
    where = run.live_dir(tmp_path) / "plots" / "metrics"
    where.mkdir(parents=True)
    (where / "beta.tsv").write_text("step\tbeta\n25\t0.01\n")
    with pytest.raises(DataError, match=r"kl_ema\.tsv: training curve not found"):
        read_controller_end(tmp_path, run)
    (where / "kl_ema.tsv").write_text("step\tkl_ema\n25\t0.7\n")
    assert read_controller_end(tmp_path, run) == ControllerEnd(0.01, 0.7, 0.7, 0.7)
