"""The confirming tier's plateau: its runs' curves read at their own length
(`cvae.confirm.steps`) and window, averaged over the replicates (bases)."""

from __future__ import annotations

import pandas as pd
import pytest
from conftest import tiny_params_raw

from zgain.params import parse_params
from zgain.report.sections.plateau import confirming_tier, plateau_sentence
from zgain.results.analysis.plateau import (
    QUANTITY,
    TOP,
    tier_plateau,
)


def _params(steps: int):
    raw = tiny_params_raw()
    raw["cvae"]["confirm"]["steps"] = steps
    raw["cvae"]["common"]["val_every"] = 10
    raw["cvae"]["common"]["rate_target"]["penalty_from"] = 0.75
    return parse_params(raw)


def _curve(steps: int, values: dict[str, float]) -> pd.DataFrame:
    """Each series rises linearly with the step at its own slope (nats per step)."""
    rows = [
        (step, series, slope * step)
        for series, slope in values.items()
        for step in range(10, steps + 1, 10)
    ]
    return pd.DataFrame(rows, columns=["step", "series", QUANTITY])


def test_the_window_follows_the_confirming_runs_length_and_averages_replicates():
    params = _params(steps=80)  # penalty from step 60: the window is steps 40-60
    values = {
        "token_mean/seed0": 0.001,
        "token_mean/seed1": 0.003,  # mean slope 0.002: +0.04 over 20 steps
        "token_share_cc/seed0": 0.0,
        "token_share_cc/seed1": 0.0,
    }
    common, variants = params.cvae.tier_common(confirming=True), params.cvae.confirm.variants
    table = tier_plateau(_curve(80, values), common, variants, 0.8, ["token_mean"], 0.95)
    rows = table.set_index("variant")
    assert (rows["step_from"].unique().tolist(), rows["step_to"].unique().tolist()) == ([40], [60])
    assert rows.loc["token_mean", "change"] == pytest.approx(0.04)
    assert rows.loc["token_mean", "capture_change"] == pytest.approx(0.05)
    assert rows.loc["token_share_cc", "change"] == pytest.approx(0.0)
    assert rows.loc[TOP, "change"] == pytest.approx(0.04)
    assert not rows.loc[TOP, "plateau"]
    assert (table["steps"] == 80).all()
    screening = table.assign(steps=100)
    sentence = plateau_sentence(screening, 1.0, confirming=table, tier=confirming_tier(params))
    assert sentence.startswith(
        "Training (the quarter before the rate's exact penalty): the top group's mean "
        "validation I^θ at C = 1.0 moved +0.040 nats (capture +0.050 [-0.268, +0.368]) over steps "
        "40–60 of 100 (screening) and +0.040 nats (capture +0.050 [-0.268, +0.368]) over steps "
        "40–60 of 80 (confirming, "
        "1 replicate): no plateau (> ±0.01) on either"
    )
    assert sentence.endswith("[table](tables/plateau_confirming.csv)).")
