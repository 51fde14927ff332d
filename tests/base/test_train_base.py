"""Facts about the `train_base` stage: the checkpoint holds only what determines the model."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import tiny_params_raw

from stages import generate, train_base
from zgain.base.model import KIND_BASE
from zgain.core.checkpoint import read_checkpoint
from zgain.params import parse_params


def _train(root: Path):
    params = parse_params(tiny_params_raw(root))
    generate.run(params.data, Path(params.paths.synthetic_dir))
    train_base.run(params, 0, device="cpu", threads=1)
    return params


def test_two_trainings_write_byte_identical_checkpoints(tmp_path: Path) -> None:
    first, second = _train(tmp_path / "a"), _train(tmp_path / "b")
    first_bytes = Path(first.paths.base(0).base_model).read_bytes()
    assert first_bytes == Path(second.paths.base(0).base_model).read_bytes()
    # Timing and host facts are recorded beside the model, never inside it.
    payload = read_checkpoint(first.paths.base(0).base_model, KIND_BASE)
    assert set(payload) == {"kind", "config", "state_dict", "metrics"}
    assert "train_seconds" not in payload["metrics"]
    meta = json.loads(Path(first.paths.base_meta).read_text())
    assert meta["train_seconds"] > 0
    assert meta["environment"]["device"] == "cpu" and meta["environment"]["threads"] == 1
