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
