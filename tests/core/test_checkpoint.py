"""Checkpoint files: the payload round trip, reserved keys, atomic writes and read errors."""

from __future__ import annotations

import math
import zipfile
from pathlib import Path

import pytest
import torch
from torch import nn

from zgain.core.checkpoint import RESERVED_KEYS, read_checkpoint, write_checkpoint
from zgain.core.errors import DataError
from zgain.core.io import TMP_SUFFIX

CONFIG = {"base": {"d_model": 4, "n_layers": 1}, "cvae": {"latent_dim": 2, "beta": None}}


class NotPlain:
    """A value that pickles but is not a plain Python value: weights_only refuses it."""


def tiny_model(seed: int = 0) -> nn.Module:
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2))


def temporaries(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.name.endswith(TMP_SUFFIX))


def test_the_reserved_keys_are_kind_config_and_state_dict() -> None:
    assert RESERVED_KEYS == ("kind", "config", "state_dict")


def test_round_trip_keeps_kind_config_extra_and_every_weight(tmp_path: Path) -> None:
    model = tiny_model()
    model[1].running_mean.fill_(0.25)  # a buffer, not a parameter: it must travel too
    extra = {"step": 7, "metrics": {"nll": 1.5, "kl": math.inf}, "seeds": [0, 1], "tag": None}
    path = tmp_path / "seed0" / "rate2.5.pt"  # the parent does not exist yet
    write_checkpoint(path, "cvae", CONFIG, model, extra)

    payload = read_checkpoint(path, "cvae")
    assert set(payload) == {"kind", "config", "state_dict", "step", "metrics", "seeds", "tag"}
    assert payload["kind"] == "cvae"
    assert payload["config"] == CONFIG
    assert payload["step"] == 7 and payload["seeds"] == [0, 1] and payload["tag"] is None
    assert payload["metrics"] == {"nll": 1.5, "kl": math.inf}
    expected = model.state_dict()
    assert list(payload["state_dict"]) == list(expected)
    assert "1.running_mean" in payload["state_dict"]
    assert "1.num_batches_tracked" in payload["state_dict"]
    for key, value in expected.items():
        assert torch.equal(payload["state_dict"][key], value), key
    assert payload["state_dict"]["1.running_mean"].tolist() == [0.25, 0.25]


def test_a_fresh_model_loaded_from_the_checkpoint_computes_the_same_outputs(
    tmp_path: Path,
) -> None:
    model = tiny_model(seed=1).eval()
    write_checkpoint(tmp_path / "base.pt", "base", CONFIG, model)
    fresh = tiny_model(seed=2).eval()
    x = torch.tensor([[1.0, -2.0, 0.5], [0.0, 3.0, -1.0]])
    assert not torch.equal(fresh(x), model(x))  # different seeds, different weights
    fresh.load_state_dict(read_checkpoint(tmp_path / "base.pt", "base")["state_dict"])
    assert torch.equal(fresh(x), model(x))


def test_saved_weights_are_detached_cpu_tensors(tmp_path: Path) -> None:
    model = tiny_model()
    assert model[0].weight.requires_grad
    write_checkpoint(tmp_path / "m.pt", "base", CONFIG, model)
    state = read_checkpoint(tmp_path / "m.pt", "base")["state_dict"]
    assert all(value.device.type == "cpu" for value in state.values())
    assert not any(value.requires_grad for value in state.values())


def test_without_extra_the_payload_has_only_the_reserved_keys(tmp_path: Path) -> None:
    write_checkpoint(str(tmp_path / "none.pt"), "base", CONFIG, tiny_model())  # a str path too
    write_checkpoint(tmp_path / "empty.pt", "base", CONFIG, tiny_model(), {})
    for name in ("none.pt", "empty.pt"):
        assert set(read_checkpoint(str(tmp_path / name), "base")) == set(RESERVED_KEYS)


def test_extra_is_not_modified(tmp_path: Path) -> None:
    extra = {"step": 3}
    write_checkpoint(tmp_path / "m.pt", "base", CONFIG, tiny_model(), extra)
    assert extra == {"step": 3}


@pytest.mark.parametrize(
    ("extra", "named"),
    [
        ({"kind": "other"}, "['kind']"),
        ({"state_dict": {}, "step": 1, "config": {}}, "['config', 'state_dict']"),
    ],
)
def test_reserved_keys_in_extra_are_refused_and_nothing_is_written(
    tmp_path: Path, extra: dict, named: str
) -> None:
    path = tmp_path / "m.pt"
    with pytest.raises(ValueError, match="reserved") as err:
        write_checkpoint(path, "base", CONFIG, tiny_model(), extra)
    assert str(err.value) == f"extra: keys {named} are reserved"
    assert list(tmp_path.iterdir()) == []


def test_a_failed_write_keeps_the_previous_checkpoint_and_leaves_no_temporary(
    tmp_path: Path,
) -> None:
    path = tmp_path / "m.pt"
    write_checkpoint(path, "base", CONFIG, tiny_model(), {"step": 1})
    before = path.read_bytes()
    with pytest.raises(Exception, match="lambda"):  # a lambda cannot be pickled
        write_checkpoint(path, "base", CONFIG, tiny_model(), {"step": 2, "fn": lambda: 0})
    assert path.read_bytes() == before
    assert read_checkpoint(path, "base")["step"] == 1
    assert temporaries(tmp_path) == []


def test_writing_again_replaces_the_checkpoint(tmp_path: Path) -> None:
    path = tmp_path / "m.pt"
    write_checkpoint(path, "base", CONFIG, tiny_model(), {"step": 1})
    write_checkpoint(path, "cvae", {"other": True}, tiny_model(), {"step": 2})
    payload = read_checkpoint(path, "cvae")
    assert (payload["config"], payload["step"]) == ({"other": True}, 2)
    assert [p.name for p in tmp_path.iterdir()] == ["m.pt"]


def test_a_missing_path_or_a_directory_is_not_found(tmp_path: Path) -> None:
    missing = tmp_path / "absent.pt"
    with pytest.raises(DataError, match="file not found") as err:
        read_checkpoint(missing, "base")
    assert str(err.value) == f"{missing}: file not found"
    with pytest.raises(DataError, match="file not found") as err:
        read_checkpoint(tmp_path, "base")
    assert str(err.value) == f"{tmp_path}: file not found"


def test_garbage_and_truncated_files_are_not_readable_checkpoints(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.pt"
    garbage.write_bytes(b"this is not a torch file")
    write_checkpoint(tmp_path / "whole.pt", "base", CONFIG, tiny_model())
    truncated = tmp_path / "truncated.pt"
    truncated.write_bytes((tmp_path / "whole.pt").read_bytes()[:100])
    for path in (garbage, truncated):
        with pytest.raises(DataError) as err:
            read_checkpoint(path, "base")
        assert str(err.value).startswith(f"{path}: not a readable checkpoint (")
        assert "\n" not in str(err.value)  # a user error is one line
        assert err.value.__cause__ is not None  # the torch error is chained, not lost


def test_an_empty_file_is_not_a_readable_checkpoint(tmp_path: Path) -> None:
    path = tmp_path / "empty.pt"
    path.write_bytes(b"")
    with pytest.raises(DataError, match="not a readable checkpoint"):
        read_checkpoint(path, "base")


def test_extra_that_is_not_plain_python_fails_to_read(tmp_path: Path) -> None:
    path = tmp_path / "m.pt"
    write_checkpoint(path, "base", CONFIG, tiny_model(), {"obj": NotPlain()})
    with pytest.raises(DataError) as err:
        read_checkpoint(path, "base")
    # one line naming the refused object, not torch's paragraph of advice (with terminal codes)
    message = str(err.value)
    assert message.startswith(f"{path}: not a readable checkpoint (an object that is not plain")
    assert "NotPlain was not an allowed global by default)" in message
    assert "\n" not in message and "\x1b" not in message


def test_a_checkpoint_of_another_kind_names_both_kinds(tmp_path: Path) -> None:
    path = tmp_path / "base.pt"
    write_checkpoint(path, "base", CONFIG, tiny_model())
    with pytest.raises(DataError) as err:
        read_checkpoint(path, "cvae")
    assert str(err.value) == f"{path}: checkpoint kind is 'base', expected 'cvae'"


@pytest.mark.parametrize(
    "payload",
    [[1, 2, 3], {"config": {}, "state_dict": {}}, torch.zeros(2)],
    ids=["list", "dict-without-kind", "tensor"],
)
def test_a_torch_file_without_a_kind_is_refused(tmp_path: Path, payload: object) -> None:
    path = tmp_path / "other.pt"
    torch.save(payload, path)
    with pytest.raises(DataError) as err:
        read_checkpoint(path, "base")
    assert str(err.value) == f"{path}: checkpoint kind is None, expected 'base'"


def test_a_damaged_pickle_is_named_as_damage_not_as_a_refused_object(tmp_path: Path) -> None:
    path = tmp_path / "damaged.pt"
    write_checkpoint(path, "base", CONFIG, tiny_model())
    with zipfile.ZipFile(path) as archive:
        entries = {info.filename: archive.read(info) for info in archive.infolist()}
    pickle_name = next(name for name in entries if name.endswith("data.pkl"))
    # an opcode no unpickler knows, in the middle of the pickle stream
    data = bytearray(entries[pickle_name])
    data[len(data) // 2] = 0xFF
    entries[pickle_name] = bytes(data)
    with zipfile.ZipFile(path, "w") as archive:
        for name, content in entries.items():
            archive.writestr(name, content)
    with pytest.raises(DataError) as err:
        read_checkpoint(path, "base")
    message = str(err.value)
    assert message.startswith(f"{path}: not a readable checkpoint (")
    assert "not plain data" not in message and "\n" not in message
    assert message != f"{path}: not a readable checkpoint ()"
