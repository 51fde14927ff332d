"""The member-axis benchmark's arithmetic (bench/members.py): no timing is asserted, only that
its figures are what its results file says they are."""

from __future__ import annotations

import argparse
import sys

import pytest

from bench import members
from bench.common import params_with, raw_params


class Work:
    """What the results file reads of a workload: the default params."""

    params = params_with(raw_params())


def test_a_compile_is_paid_once_over_a_stage() -> None:
    # 100 calls of 3 s in lockstep against one 30 s compile and 100 calls of 2 s
    assert members.amortized_ratio(2.0, 3.0, 30.0, 100) == pytest.approx(300 / 230)
    # with nothing to amortize it is the plain ratio
    assert members.amortized_ratio(2.0, 3.0, 0.0, 1) == pytest.approx(1.5)


def test_the_projection_prices_the_study_at_the_fastest_rate_measured() -> None:
    confirm = Work.params.cvae.confirm
    runs = members.STUDY_BASES * len(confirm.variants) * len(confirm.rates) * len(confirm.seeds)
    # 2 members x 10 steps in 1 s is 20 run-steps/s; 4 members x 10 steps in 4 s only 10
    seconds = {"lockstep 2": 1.0, "stacked 4": 4.0}
    line = members.projection(Work, seconds, 10, 3000)
    assert f"({runs} runs × 3000 steps = {runs * 3000:,} run-steps)" in line
    assert f"would train in {runs * 3000 / 20 / 60:,.0f} min" in line
    assert "(lockstep 2 members: 20.0 run-steps/s)" in line


def test_sync_counts_name_their_sources_or_say_why_there_are_none() -> None:
    line = members.sync_line({"stacked, M = 4": (1.5, [("zgain/x.py:3", 20)])}, 20)
    assert "stacked, M = 4: 1.50 a step; most from zgain/x.py:3 (20)" in line
    assert "not counted" in members.sync_line({}, 20)


def test_compiled_counts_must_be_timed_members(monkeypatch, capsys) -> None:
    argv = ["bench.members", "--members", "1,4", "--compile", "8"]
    monkeypatch.setattr(sys, "argv", argv)
    with pytest.raises(SystemExit) as stop:
        members.main()
    assert stop.value.code == 2
    assert "--compile 8: every count must be one of --members" in capsys.readouterr().err


def test_a_compile_that_fails_is_reported_in_its_row_and_below() -> None:
    args = argparse.Namespace(steps=10, repeats=1, members="1", compile="1")
    seconds = {"lockstep 1": 1.0, "stacked 1": 0.5}
    failed = {1: "BackendCompilerFailed: no C++ compiler"}
    text = members.markdown(args, Work, "cpu", 1, seconds, {}, {}, {}, {}, failed)
    assert "| 1 | 10.0 | 20.0 | 2.00 | compile failed | – | – | – |" in text
    assert (
        "The compiled engine at M = 1 failed here: BackendCompilerFailed: no C++ compiler" in text
    )
