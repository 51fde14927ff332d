"""Facts about the `train_base` stage: the checkpoint holds only what determines the model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import tiny_params_raw

from stages import generate, train_base
from zgain.base.model import KIND_BASE
from zgain.core.checkpoint import read_checkpoint
from zgain.core.errors import ParamsError
from zgain.params import parse_params


def _train(root: Path, base: int = 0):
    params = parse_params(tiny_params_raw(root))
    generate.run(params.data, Path(params.paths.synthetic_dir))
    train_base.run(params, base, device="cpu", threads=1)
    return params


def test_two_trainings_write_byte_identical_checkpoints(tmp_path: Path) -> None:
    first, second = _train(tmp_path / "a"), _train(tmp_path / "b")
    first_bytes = Path(first.paths.base(0).base_model).read_bytes()
    assert first_bytes == Path(second.paths.base(0).base_model).read_bytes()
    # Timing and host facts are recorded beside the model, never inside it.
    payload = read_checkpoint(first.paths.base(0).base_model, KIND_BASE)
    assert set(payload) == {"kind", "config", "state_dict", "metrics"}
    assert "train_seconds" not in payload["metrics"]
    # nor in base.json, which the report reads: only in the run's dvclive summary
    meta = json.loads(Path(first.paths.base(0).base_meta).read_text())
    assert meta["seed"] == 0 and "train_seconds" not in meta and "environment" not in meta
    assert "seeds" not in meta["train_params"]  # adding a base changes no base's metadata
    again = json.loads(Path(second.paths.base(0).base_meta).read_text())
    assert {**meta, "checkpoint": None} == {**again, "checkpoint": None}  # paths differ only
    live = json.loads((Path(first.paths.base(0).base_live) / "metrics.json").read_text())
    assert live["train_seconds"] > 0
    assert live["environment"]["device"] == "cpu" and live["environment"]["threads"] == 1


def test_each_base_seed_trains_its_own_base_in_its_own_files(tmp_path: Path) -> None:
    """Base 1 (tiny profile: base.seeds [0, 1]) differs from base 0 and writes only under 1/."""
    params = _train(tmp_path, base=1)
    one, zero = params.paths.base(1), params.paths.base(0)
    assert Path(one.base_model).is_file() and Path(one.base_live).is_dir()
    assert not Path(zero.base_model).exists() and not Path(zero.base_live).exists()
    assert json.loads(Path(one.base_meta).read_text())["seed"] == 1
    train_base.run(params, 0, device="cpu", threads=1)
    assert Path(zero.base_model).read_bytes() != Path(one.base_model).read_bytes()


def test_an_unlisted_base_is_refused_before_any_work(tmp_path: Path) -> None:
    params = parse_params(tiny_params_raw(tmp_path))
    with pytest.raises(ParamsError, match=r"^base\.seeds: no base 5 \(listed: 0, 1\)$"):
        train_base.run(params, 5, device="cpu", threads=1)
    assert not Path(params.paths.bases_dir).exists()
