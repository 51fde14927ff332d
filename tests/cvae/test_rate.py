"""The β controllers: dual ascent on log β toward a target rate, and the fixed schedules."""

from __future__ import annotations

import math

import pytest

from zgain.cvae.rate import (
    LOG_RATIO_FLOOR,
    FixedSchedule,
    RateTarget,
    make_schedule,
    warmup_factor,
)
from zgain.params import RateTargetParams

SETTINGS = RateTargetParams(
    rule="difference", eta=0.1, ema=0.5, beta_init=0.2, beta_min=0.01, beta_max=4.0, warmup_steps=0
)
LOG_RATIO = SETTINGS.model_copy(update={"rule": "log_ratio"})


def test_warmup_ramps_beta_and_holds_the_multiplier() -> None:
    control = RateTarget(target=1.0, beta_init=0.2, settings=SETTINGS, warmup_steps=10)
    assert control.beta(0) == 0.0
    assert control.beta(5) == pytest.approx(0.1)
    control.observe(5, 9.0)  # far above target, but inside the warm-up: no update
    assert control.beta(10) == pytest.approx(0.2)
    assert control.kl_ema == 9.0


def test_dual_ascent_step_matches_the_formula() -> None:
    control = RateTarget(target=1.0, beta_init=0.2, settings=SETTINGS, warmup_steps=0)
    control.observe(0, 3.0)  # first observation: KL_ema = 3
    assert control.beta(1) == pytest.approx(0.2 * math.exp(0.1 * (3.0 - 1.0)))
    control.observe(1, 1.0)  # KL_ema = 0.5·3 + 0.5·1 = 2
    expected = math.log(0.2) + 0.1 * 2.0 + 0.1 * (2.0 - 1.0)
    assert control.beta(2) == pytest.approx(math.exp(expected))
    assert control.state() == {"kl_target": 1.0, "kl_ema": 2.0}


def test_log_ratio_step_matches_the_formula() -> None:
    control = RateTarget(target=0.5, beta_init=0.2, settings=LOG_RATIO, warmup_steps=0)
    control.observe(0, 2.0)  # KL_ema = 2 = 4·C: log β rises by η·log 4
    assert control.beta(1) == pytest.approx(0.2 * 4.0**0.1)
    control.observe(1, 0.0)  # KL_ema = 1 = 2·C
    assert control.beta(2) == pytest.approx(0.2 * 4.0**0.1 * 2.0**0.1)


def test_log_ratio_moves_beta_alike_for_the_same_relative_miss_at_every_rate() -> None:
    """The scale-free rule: 2·C moves β by the same factor at C = 0.25 and at C = 2; the
    difference rule moves it 8 times more (in log β) at C = 2."""
    steps = {}
    for settings in (SETTINGS, LOG_RATIO):
        for target in (0.25, 2.0):
            control = RateTarget(target=target, beta_init=0.2, settings=settings, warmup_steps=0)
            control.observe(0, 2 * target)
            steps[settings.rule, target] = math.log(control.beta(1) / 0.2)
    assert steps["log_ratio", 0.25] == pytest.approx(steps["log_ratio", 2.0])
    assert steps["difference", 2.0] == pytest.approx(8 * steps["difference", 0.25])


def test_log_ratio_reads_a_zero_rate_at_its_floor() -> None:
    control = RateTarget(target=1.0, beta_init=0.2, settings=LOG_RATIO, warmup_steps=0)
    control.observe(0, 0.0)
    assert control.beta(1) == pytest.approx(0.2 * LOG_RATIO_FLOOR**0.1)


def test_beta_is_clamped_to_its_bounds() -> None:
    control = RateTarget(target=1.0, beta_init=0.2, settings=SETTINGS, warmup_steps=0)
    for step in range(200):
        control.observe(step, 100.0)
    assert control.beta(200) == pytest.approx(SETTINGS.beta_max)
    for step in range(200, 600):
        control.observe(step, 0.0)
    assert control.beta(600) == pytest.approx(SETTINGS.beta_min)


@pytest.mark.parametrize("settings", [SETTINGS, LOG_RATIO], ids=["difference", "log_ratio"])
def test_a_linear_kl_response_converges_to_the_target(settings: RateTargetParams) -> None:
    """Against a plant whose KL falls as β rises (KL = 2/β), β settles where KL = C."""
    control = RateTarget(target=0.5, beta_init=1.0, settings=settings, warmup_steps=0)
    for step in range(2000):
        control.observe(step, 2.0 / control.beta(step))
    assert 2.0 / control.beta(2000) == pytest.approx(0.5, rel=1e-3)


def test_initial_beta_outside_the_bounds_is_refused() -> None:
    with pytest.raises(ValueError, match=r"initial beta must lie in \[beta_min, beta_max\]"):
        RateTarget(target=1.0, beta_init=10.0, settings=SETTINGS, warmup_steps=0)
    with pytest.raises(ValueError, match="target rate must be > 0"):
        RateTarget(target=0.0, beta_init=0.2, settings=SETTINGS, warmup_steps=0)


def test_warmup_factor() -> None:
    assert [warmup_factor(s, 4) for s in (0, 2, 4, 8)] == [0.0, 0.5, 1.0, 1.0]
    assert warmup_factor(0, 0) == 1.0


def test_make_schedule_picks_the_named_schedule(default_params_raw: dict) -> None:
    from zgain.params import parse_params

    common = parse_params(default_params_raw).cvae.common
    assert isinstance(make_schedule(common, 0.2, 1.0), RateTarget)
    fixed = make_schedule(common.model_copy(update={"beta_schedule": "linear"}), 0.2, 1.0)
    assert isinstance(fixed, FixedSchedule)
    fixed.observe(0, 50.0)  # a fixed schedule ignores what it is told
    assert fixed.beta(common.warmup_steps) == pytest.approx(0.2)
    assert fixed.state() == {}


def test_the_rate_target_ramps_over_its_own_warmup_not_the_linear_schedules(
    default_params_raw: dict,
) -> None:
    """cvae.common.warmup_steps belongs to the linear schedule; rate_target.warmup_steps (0 by
    default: the controller acts from step 0) to the rate target."""
    from zgain.params import parse_params

    common = parse_params(default_params_raw).cvae.common
    assert common.warmup_steps > 0 and common.rate_target.warmup_steps == 0
    control = make_schedule(common, 0.01, 1.0)
    excess = 2.0 if common.rate_target.rule == "difference" else math.log(3.0)
    assert control.beta(0) == pytest.approx(0.01)
    control.observe(0, 3.0)  # acted on at once: log β rises by η·excess(3, C = 1)
    assert control.beta(1) == pytest.approx(0.01 * math.exp(common.rate_target.eta * excess))
    ramped = common.model_copy(
        update={"rate_target": common.rate_target.model_copy(update={"warmup_steps": 10})}
    )
    assert make_schedule(ramped, 0.01, 1.0).beta(5) == pytest.approx(0.005)


def test_the_exact_penalty_starts_at_its_share_of_training(default_params_raw: dict) -> None:
    """penalty_from is a share of cvae.common.steps: 0.75 of 400 steps starts γ at step 300;
    the fixed schedules never carry it."""
    from zgain.params import parse_params

    common = parse_params(default_params_raw).cvae.common
    settings = common.rate_target.model_copy(update={"penalty": 1.5, "penalty_from": 0.75})
    control = make_schedule(
        common.model_copy(update={"rate_target": settings, "steps": 400}), 0.01, 1.0
    )
    assert [control.penalty(s) for s in (0, 299, 300, 399)] == [0.0, 0.0, 1.5, 1.5]
    fixed = make_schedule(common.model_copy(update={"beta_schedule": "constant"}), 0.2, 1.0)
    assert fixed.penalty(399) == 0.0
