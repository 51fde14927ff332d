"""studies/pilot: stage seconds from a stage clock, costs, and the designs that decide δ."""

from __future__ import annotations

from pathlib import Path

import pytest

from studies.pilot.pilot import DELTA, Costs, costs, designs, stage_seconds
from zgain.stats.power import detectable_difference

CLOCK = """\
100.0 Running stage 'surprisal@1':
101.0 > python -m stages.surprisal --base 1
112.0 Running stage 'normalizer@1':
113.5 Running stage 'confirm_train_cvae@1-1':
200.0 step 1500/3000 kl 0.98
413.0 Stage 'confirm_train_cvae@1-0' didn't change, skipping
413.5 Running stage 'confirm_evaluate@1-1':
433.5 Running stage 'confirm_train_cvae@2-1':
753.5 Running stage 'confirm_evaluate@2-1':
773.5 END rc=0
"""


def test_a_stage_lasts_until_the_next_one_starts_or_is_skipped(tmp_path: Path) -> None:
    clock = tmp_path / "clock.txt"
    clock.write_text(CLOCK)
    seconds = stage_seconds([clock])
    assert seconds == {
        "surprisal": [12.0],
        "normalizer": [1.5],
        "confirm_train_cvae": [299.5, 320.0],
        "confirm_evaluate": [20.0, 20.0],
    }
    found = costs(seconds, base_training=[150.0, 170.0])
    assert found == Costs(seed=309.75 + 20.0, base=160.0 + 12.0 + 1.5)


def test_each_design_is_the_fewest_bases_that_detect_delta() -> None:
    cost = Costs(seed=300.0, base=200.0)
    plans = designs(0.03, 0.06, 4, cost)
    assert [k for _, k, _, _ in plans] == list(range(1, 9))
    for bases, k, detectable, hours in plans:
        assert detectable <= DELTA
        assert detectable_difference(0.03, 0.06, bases - 1, k, 0.95) > DELTA or bases == 4
        assert hours == pytest.approx(bases * (200.0 + k * 300.0) / 3600)
    # more seeds per base never need more bases
    assert all(a[0] >= b[0] for a, b in zip(plans, plans[1:], strict=False))


def test_the_pilot_table_gives_k_star_the_cheapest_design_and_the_declared_designs_reach() -> None:
    import math

    import pandas as pd

    from studies.pilot.pilot import pilot_table

    # mean_cc − token_mean on base b, seed s: 0.01 b + 0.02 s (seeds differ more than bases)
    rows = []
    for b in (1, 2, 3, 4):
        for s in (0, 1):
            for v, value in (("token_mean", 0.7), ("mean_cc", 0.7 + 0.01 * b + 0.02 * s)):
                rows.append({"base": b, "seed": s, "variant": v, "capture": value,
                             "marginal_gain": value - 0.7})  # fmt: skip
    params = {"report": {"baseline_variant": "token_mean",
                         "equivalence": {"capture": 0.05, "marginal_gain": 0.02}}}  # fmt: skip
    cost = Costs(seed=800.0, base=300.0)
    table = pilot_table(pd.DataFrame(rows), params, ["token_mean", "mean_cc"], cost, (8, 2))
    capture = table[table["metric"] == "capture"].iloc[0]
    # within a base the two seeds differ by 0.02: σ_W² = 0.02² / 2; the per-base means step by
    # 0.01, so MS_B = 2 var(0.01, 0.02, 0.03, 0.04) and σ_B² = (MS_B − σ_W²) / 2
    sigma_w2 = 0.02**2 / 2
    sigma_b2 = (2 * 0.01**2 * 5 / 3 - sigma_w2) / 2
    assert capture.sigma_w == pytest.approx(math.sqrt(sigma_w2))
    assert capture.sigma_b == pytest.approx(math.sqrt(sigma_b2))
    assert capture.k_star == pytest.approx(math.sqrt(300.0 * sigma_w2 / (800.0 * sigma_b2)))
    cheapest = min(designs(capture.sigma_b, capture.sigma_w, 4, cost), key=lambda p: p[3])
    assert (capture.plan_bases, capture.plan_seeds) == cheapest[:2]
    assert capture.design_detectable == pytest.approx(
        detectable_difference(capture.sigma_b, capture.sigma_w, 8, 2, 0.95)
    )
    gain = table[table["metric"] == "marginal_gain"].iloc[0]
    assert gain.k_star is None or math.isnan(gain.k_star)  # no plan for G^marg


def test_a_seed_effect_shared_by_every_base_is_found_by_hand() -> None:
    import pandas as pd
    from scipy import stats

    from studies.deciding.seed_effect import seed_effect

    # Δ on base b, seed s: 0.01 b + 0.03 s, plus ±0.001 of interaction
    diffs = pd.DataFrame(
        [[0.01 * b + 0.001 * (-1) ** b, 0.01 * b + 0.03 - 0.001 * (-1) ** b] for b in (1, 2, 3, 4)],
        columns=[0, 1],
    )
    row = seed_effect(diffs)
    # seeds: 4 bases × (0.015)² × 2 over 1 df; residual: 8 × 0.001² over 3 df
    assert row["ms_seed"] == pytest.approx(4 * 2 * 0.015**2)
    assert row["ms_residual"] == pytest.approx(8 * 0.001**2 / 3)
    assert row["f_seed"] == pytest.approx(row["ms_seed"] / row["ms_residual"])
    assert row["p_seed"] == pytest.approx(stats.f.sf(675.0, 1, 3))  # F = 0.0018 / (8e-6 / 3)
    assert (row["mean_seed_0"], row["mean_seed_1"]) == pytest.approx((0.025, 0.055))
