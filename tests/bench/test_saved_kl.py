"""bench.saved_kl: the gaps it reports between the splits and against the running average."""

from __future__ import annotations

import pandas as pd
import pytest

from bench.saved_kl import markdown, relative_gaps


def table() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "run": ["a seed 0", "b seed 1"],
            "C": [0.25, 0.5],
            "kl": [0.20, 0.45],
            "saved test": [0.20, 0.45],
            "saved train": [0.19, 0.46],
            "kl_ema_end": [0.25, 0.49],
            "cause": ["saved_weights", "unsettled"],
        }
    )


def test_relative_gaps_are_mean_absolute_differences_over_the_target() -> None:
    gaps = relative_gaps(table())
    assert gaps["splits"] == pytest.approx((0.01 / 0.25 + 0.01 / 0.5) / 2)
    assert gaps["average"] == pytest.approx((0.05 / 0.25 + 0.04 / 0.5) / 2)


def test_the_results_name_each_run_and_both_gaps() -> None:
    text = markdown(table(), "python -m bench.saved_kl R", 100, "the synthetic world")
    assert "| a seed 0 | 0.25 | 0.200 | 0.200 | 0.190 | 0.250 | saved_weights |" in text
    assert "/ C: 0.030; mean |kl_ema_end − saved test| / C: 0.140." in text
    assert "100 training and 100 test examples drawn at random" in text
    assert "REPO: a completed run on the synthetic world." in text
