"""A run trained in a group equals the same run trained alone.

See docs/architecture.md#runs-and-groups. The group's runs share batches and the frozen reader's
pass over them; each keeps its own initialization, noise, optimizer and β controller. Trained
in lockstep in one process, or side by side in forked processes, every checkpoint tensor and
every evaluation metric must match a solo run of the same (variant, rate, seed) within
GROUP_TOL.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from conftest import upstream_copy

from stages import evaluate, train_cvae
from zgain.core.checkpoint import read_checkpoint
from zgain.core.runs import Group, Run
from zgain.cvae.model import KIND_CVAE
from zgain.params import Params

GROUP_RATES = [0.5, 1.0, 2.0]
VARIANT = "token_share_cc"
SEED = 1
GROUP_TOL = 1e-6
"""Largest |group − solo| allowed in a checkpoint tensor or a metric. Both run the same float32
ops on one thread per process, so they agree to rounding of the reduction order (measured: 0)."""


def _state(params: Params, run: Run) -> dict[str, torch.Tensor]:
    return read_checkpoint(run.checkpoint(params.paths.cvae_dir), KIND_CVAE)["state_dict"]


def _metrics(params: Params, run: Run) -> dict[str, float]:
    raw = json.loads((run.eval_dir(params.paths.eval_dir) / "metrics.json").read_text())
    return {k: v for k, v in raw.items() if isinstance(v, float)}


@pytest.fixture(scope="module")
def solo(tiny_pipeline, tmp_path_factory) -> Params:
    """Each run of the group trained and evaluated alone, one thread."""
    params = upstream_copy(tiny_pipeline, tmp_path_factory.mktemp("solo") / "copy", GROUP_RATES)
    for rate in GROUP_RATES:
        train_cvae.run(
            params, Group.screening(0, VARIANT, SEED), device="cpu", threads=1, rates=[rate]
        )
        evaluate.run(
            params, Group.screening(0, VARIANT, SEED), device="cpu", threads=1, rates=[rate]
        )
    return params


@pytest.mark.parametrize("threads", [1, 2], ids=["lockstep", "side-by-side"])
def test_a_group_member_equals_the_run_trained_alone(solo, tiny_pipeline, tmp_path, threads):
    params = upstream_copy(tiny_pipeline, tmp_path / "group", GROUP_RATES)
    lasts = train_cvae.run(params, Group.screening(0, VARIANT, SEED), device="cpu", threads=threads)
    evaluate.run(params, Group.screening(0, VARIANT, SEED), device="cpu", threads=threads)
    assert len(lasts) == len(GROUP_RATES)
    for rate, last in zip(GROUP_RATES, lasts, strict=True):
        run = Run(VARIANT, rate, SEED, 0)
        grouped, alone = _state(params, run), _state(solo, run)
        assert grouped.keys() == alone.keys()
        for name, tensor in grouped.items():
            torch.testing.assert_close(tensor, alone[name], atol=GROUP_TOL, rtol=0, msg=name)
        grouped_metrics, alone_metrics = _metrics(params, run), _metrics(solo, run)
        assert grouped_metrics.keys() == alone_metrics.keys()
        for key, value in grouped_metrics.items():
            assert value == pytest.approx(alone_metrics[key], abs=GROUP_TOL), key
        assert last["kl_target"] == rate


def test_the_runs_of_a_group_differ_by_their_rate_alone(solo):
    """Same seed, same batches, same initialization: only the target rate tells them apart, and
    a higher target ends at a higher KL."""
    states = [_state(solo, Run(VARIANT, rate, SEED, 0)) for rate in GROUP_RATES]
    injection = [s["z_injection.weight"] for s in states]
    assert not torch.equal(injection[0], injection[1])
    kls = [_metrics(solo, Run(VARIANT, rate, SEED, 0))["kl"] for rate in GROUP_RATES]
    assert np.all(np.diff(kls) > 0), kls
