"""The report says when its runs come from different device kinds, naming each kind's runs."""

from __future__ import annotations

from pathlib import Path

import pytest
from report_fakes import FAKE_ENVIRONMENT, RATES, SEEDS, WEIGHTS, make_params, write_study

from stages import report as report_stage
from zgain.core.io import read_json, write_json
from zgain.core.runs import Run
from zgain.evaluate.schema import ENVIRONMENT_KEY
from zgain.results.load.runs import device_kind


def set_device(eval_dir: Path, variant: str, seed: int, device: str | None) -> None:
    for rate in RATES:
        path = Run(variant, rate, seed, 0).eval_dir(eval_dir) / "metrics.json"
        metrics = read_json(path)
        if device is None:
            del metrics[ENVIRONMENT_KEY]
        else:
            metrics[ENVIRONMENT_KEY] = {**FAKE_ENVIRONMENT, "device": device}
        write_json(metrics, path)


def summary_head(tmp_path: Path, devices: dict[tuple[str, int], str | None]) -> str:
    params = make_params(tmp_path)
    eval_dir = Path(params.paths.eval_dir)
    write_study(params)
    for (variant, seed), device in devices.items():
        set_device(eval_dir, variant, seed, device)
    report_stage.run(params)
    text = (Path(params.paths.reports_dir) / "summary.md").read_text()
    start = text.index("## Setup\n")
    return text[start : text.index("\n## ", start)]


def test_runs_on_one_device_kind_get_no_note(tmp_path):
    assert "Devices" not in summary_head(tmp_path / "cpu", {})
    # two GPUs are one kind
    gpus = {(v, s): f"cuda:{s % 2}" for v in WEIGHTS for s in SEEDS}
    assert "Devices" not in summary_head(tmp_path / "cuda", gpus)


def test_mixed_kinds_are_named_with_their_runs(tmp_path):
    cuda_runs = {("token_sum", 1): "cuda:1", ("token_mean", 2): "cuda"}
    head = summary_head(tmp_path, cuda_runs)
    cpu_runs = [
        f"{v}-{r!r}-{s}" for r in RATES for v in WEIGHTS for s in SEEDS if (v, s) not in cuda_runs
    ]
    cuda = "token_mean-1.0-2, token_sum-1.0-1, token_mean-2.5-2, token_sum-2.5-1"
    expected = f"(cpu: {', '.join(cpu_runs)}; cuda: {cuda})"
    assert f"- Devices: the runs come from 2 device kinds {expected}" in head


@pytest.mark.parametrize(
    ("environment", "kind"),
    [({"device": "cuda:3"}, "cuda"), ({"device": "mps"}, "mps"), (None, "unrecorded")],
)
def test_device_kind_drops_the_index(environment, kind):
    assert device_kind(environment) == kind
