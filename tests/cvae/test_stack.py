"""A member is a run (docs/performance.md#the-member-axis): the runs of a group trained as one
model with a member axis (`ZGAIN_ENGINE=stacked`) take, step by step, the parameters of the
same runs trained alone, and end with the same logged values and evaluation, up to the float
rounding of batched matmuls."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch
from conftest import upstream_copy
from test_group import GROUP_RATES, SEED, VARIANT, _metrics, _state
from test_scale_free import max_parameter_difference
from test_train_cvae import DEFAULT_VARIANTS, _fresh_cvae, _short_common, _train_inputs

from stages import evaluate, train_cvae
from zgain.core.environment import ENGINE_ENV, resolve_engine
from zgain.core.errors import ParamsError
from zgain.core.runs import Group, Run
from zgain.cvae import member as member_module
from zgain.cvae import stack as stack_module
from zgain.cvae.fit import fit_group
from zgain.cvae.objective import Objective
from zgain.params import AggressiveParams, Params

STEPS = 30
STACK_TOL = 1e-4
"""Largest |stacked − solo| allowed in a parameter or a logged value. The stack's batched
matmuls sum in another order than a solo run's, and Adam carries that rounding to the
parameters at about lr·(rounding) per step (measured on this profile: see the test's output)."""
MEMBERS = [("token_mean", 1.0), ("mean_cc", 0.5), ("token_sum", 2.0)]
"""Three runs of one group: another objective and another target rate each."""


def _runs(params: Params, steps: int):
    """(model, objective, log) for each of MEMBERS, each model initialized from the seed
    alone, as the stage does; and the fit inputs."""
    common = _short_common(params, steps=steps)
    train_batch, frozen, monitor, monitor_base = _train_inputs(params)
    surprisal = torch.from_numpy(frozen.surprisal)
    logs: list[list[dict[str, float]]] = [[] for _ in MEMBERS]
    runs = []
    for (name, rate), log in zip(MEMBERS, logs, strict=True):
        objective = Objective.on_split(
            common,
            DEFAULT_VARIANTS[name],
            frozen.normalizer.mean_surprisal,
            rate,
            surprisal,
            train_batch.mask,
        )
        runs.append((_fresh_cvae(params, common), objective, lambda s, v, log=log: log.append(v)))
    inputs = (train_batch, surprisal, monitor, monitor_base)
    return runs, inputs, logs


def _fit(params: Params, runs, inputs, engine: str) -> list[dict[str, float]]:
    return fit_group(
        runs,
        *inputs,
        seed=SEED,
        max_x_len=params.data.length_max,
        device=torch.device("cpu"),
        engine=engine,
    )


def test_a_stacked_member_takes_its_solo_runs_parameters_step_by_step(tiny_pipeline, monkeypatch):
    solo_iterates: list[list[dict[str, torch.Tensor]]] = []
    solo_lasts, solo_models = [], []
    original_member_step = member_module.Member.step
    for index in range(len(MEMBERS)):
        runs, inputs, _ = _runs(tiny_pipeline, STEPS)
        trace: list[dict[str, torch.Tensor]] = []

        def record_member(run, trace=trace) -> None:
            original_member_step(run)
            trace.append({k: v.detach().clone() for k, v in run.model.named_parameters()})

        monkeypatch.setattr(member_module.Member, "step", record_member)
        solo_lasts += _fit(tiny_pipeline, [runs[index]], inputs, "lockstep")
        solo_models.append(runs[index][0])
        solo_iterates.append(trace)
    monkeypatch.undo()

    stacked_iterates: list[dict[str, torch.Tensor]] = []
    original_stack_step = stack_module.Stack.step

    def record_stack(stack) -> None:
        original_stack_step(stack)
        stacked_iterates.append({k: w.detach().clone() for k, w in stack.weights.items()})

    monkeypatch.setattr(stack_module.Stack, "step", record_stack)
    runs, inputs, _ = _runs(tiny_pipeline, STEPS)
    stacked_lasts = _fit(tiny_pipeline, runs, inputs, "stacked")

    assert len(stacked_iterates) == STEPS
    worst = []
    for step, stacked in enumerate(stacked_iterates):
        for index in range(len(MEMBERS)):
            solo = solo_iterates[index][step]
            differences = [
                (stacked[name][index].double() - solo[name.removeprefix("cvae.")].double()).abs()
                for name in stacked
            ]
            worst.append(max(d.max().item() for d in differences))
            assert worst[-1] <= STACK_TOL, (step, MEMBERS[index], worst[-1])
    print(
        f"stacked vs solo, max |Δθ| over {STEPS} steps x {len(MEMBERS)} members: {max(worst):.3e}"
    )
    # the saved weights (the moving average) and every logged value
    for (model, _, _), alone in zip(runs, solo_models, strict=True):
        assert max_parameter_difference(model, alone) <= STACK_TOL
    for stacked_last, solo_last in zip(stacked_lasts, solo_lasts, strict=True):
        assert stacked_last.keys() == solo_last.keys()
        for key, value in stacked_last.items():
            assert value == pytest.approx(solo_last[key], abs=STACK_TOL, rel=STACK_TOL), key
    # and the members did not train alike: each is its own run
    assert not torch.equal(
        stacked_iterates[-1]["cvae.z_injection.weight"][0],
        stacked_iterates[-1]["cvae.z_injection.weight"][1],
    )


def test_the_compiled_engine_trains_the_stacked_runs(tiny_pipeline):
    """ZGAIN_ENGINE=compiled: the stack's forward under torch.compile (inductor) ends with the
    eager stack's weights and logged values, up to the fused kernels' float rounding."""
    eager_runs, inputs, _ = _runs(tiny_pipeline, STEPS)
    eager_lasts = _fit(tiny_pipeline, eager_runs, inputs, "stacked")
    compiled_runs, inputs, _ = _runs(tiny_pipeline, STEPS)
    compiled_lasts = _fit(tiny_pipeline, compiled_runs, inputs, "compiled")
    worst = max(
        max_parameter_difference(compiled, eager)
        for (compiled, _, _), (eager, _, _) in zip(compiled_runs, eager_runs, strict=True)
    )
    print(f"compiled vs eager stacked, max |Δθ| after {STEPS} steps: {worst:.3e}")
    assert worst <= STACK_TOL
    for compiled_last, eager_last in zip(compiled_lasts, eager_lasts, strict=True):
        assert compiled_last.keys() == eager_last.keys()
        for key, value in compiled_last.items():
            assert value == pytest.approx(eager_last[key], abs=STACK_TOL, rel=STACK_TOL), key


def test_the_stage_trains_the_same_runs_stacked(tiny_pipeline, tmp_path, monkeypatch):
    """The train and evaluate stages under ZGAIN_ENGINE=stacked: every checkpoint tensor and
    every evaluation metric within STACK_TOL of the runs trained alone (lockstep)."""
    alone = upstream_copy(tiny_pipeline, tmp_path / "alone", GROUP_RATES)
    train_cvae.run(alone, Group.screening(0, VARIANT, SEED), device="cpu", threads=1)
    evaluate.run(alone, Group.screening(0, VARIANT, SEED), device="cpu", threads=1)
    monkeypatch.setenv(ENGINE_ENV, "stacked")
    stacked = upstream_copy(tiny_pipeline, tmp_path / "stacked", GROUP_RATES)
    train_cvae.run(stacked, Group.screening(0, VARIANT, SEED), device="cpu", threads=1)
    evaluate.run(stacked, Group.screening(0, VARIANT, SEED), device="cpu", threads=1)
    for rate in GROUP_RATES:
        run = Run(VARIANT, rate, SEED, 0)
        one, other = _state(stacked, run), _state(alone, run)
        for name, tensor in one.items():
            torch.testing.assert_close(tensor, other[name], atol=STACK_TOL, rtol=0, msg=name)
        metrics, reference = _metrics(stacked, run), _metrics(alone, run)
        for key, value in metrics.items():
            assert value == pytest.approx(reference[key], abs=STACK_TOL, rel=STACK_TOL), key


def test_the_engine_comes_from_the_environment(monkeypatch):
    cpu, cuda = torch.device("cpu"), torch.device("cuda")
    monkeypatch.delenv(ENGINE_ENV, raising=False)
    assert resolve_engine(cpu) == "lockstep"
    assert resolve_engine(cuda) == "stacked"
    monkeypatch.setenv(ENGINE_ENV, "stacked")
    assert resolve_engine(cpu) == "stacked"
    monkeypatch.setenv(ENGINE_ENV, "vmap")
    with pytest.raises(
        ParamsError, match="ZGAIN_ENGINE: must be one of lockstep, stacked, compiled"
    ):
        resolve_engine(cpu)


def test_a_group_that_cannot_be_stacked_is_refused_by_name(tiny_pipeline):
    runs, inputs, _ = _runs(tiny_pipeline, 2)
    model, objective, log = runs[0]
    aggressive = DEFAULT_VARIANTS["token_mean"].model_copy(
        update={"aggressive": AggressiveParams(encoder_steps=2, until=1)}
    )
    runs[1] = (runs[1][0], replace(objective, variant=aggressive), runs[1][2])
    with pytest.raises(ParamsError, match="aggressive encoder steps"):
        _fit(tiny_pipeline, runs, inputs, "stacked")
