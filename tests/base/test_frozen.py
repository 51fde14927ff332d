"""Facts about the frozen contract: aligned surprisal and one base sha256 across artefacts."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pyarrow.compute as pc
import pytest
import torch
from conftest import tiny_params_raw

from zgain.base.frozen import load_frozen
from zgain.base.model import load_base, save_base
from zgain.base.schema import EXAMPLES_SCHEMA, TOKENS_SCHEMA
from zgain.core.errors import DataError, ProvenanceError
from zgain.core.io import read_table, sha256_file, table_metadata, write_table
from zgain.params import Params, parse_params
from zgain.world.splits import Split, load_split
from zgain.world.synthetic import World

PERTURBATION = 1e-3  # added to one weight of the base: a different model, a different sha256


def _copy_pipeline(params: Params, dest: Path) -> Params:
    """The fixture's artefacts copied under `dest`, with params pointing at the copy."""
    root = Path(os.path.commonpath(list(params.paths.model_dump().values())))
    shutil.copytree(root, dest)
    return parse_params(tiny_params_raw(dest))


def _split(params: Params, name: str) -> Split:
    world = World.from_params(params.data)
    return load_split(Path(params.paths.synthetic_dir) / f"{name}.parquet", world)


def _width(params: Params) -> int:
    return World.from_params(params.data).n_targets


def _stored(params: Params) -> dict[tuple[int, int], float]:
    table = read_table(Path(params.paths.base(0).surprisal_dir) / "tokens.parquet", TOKENS_SCHEMA)
    keys = zip(table["example_id"].to_pylist(), table["position"].to_pylist(), strict=True)
    return dict(zip(keys, table["surprisal"].to_pylist(), strict=True))


@pytest.mark.parametrize("name", ["train", "test"])
def test_surprisal_follows_the_split_order(tiny_pipeline, name):
    params = tiny_pipeline
    split = _split(params, name)
    # A shuffled subset: rows must follow the split handed in, not the file's order.
    order = np.random.default_rng(0).permutation(len(split))[: len(split) // 2]
    shuffled = Split(*(field[order] for field in split))
    frozen = load_frozen(params.paths.base(0), shuffled, _width(params))
    stored = _stored(params)
    assert frozen.surprisal.shape == frozen.mask.shape == (len(order), _width(params))
    assert frozen.surprisal.dtype == np.float32
    for row, example_id in enumerate(shuffled.example_id):
        n_tokens = int(shuffled.y_len[row]) + 1
        assert frozen.mask[row].tolist() == [t < n_tokens for t in range(_width(params))]
        expected = [stored[(int(example_id), t)] for t in range(n_tokens)]
        assert frozen.surprisal[row, :n_tokens].tolist() == expected
        assert not frozen.surprisal[row, n_tokens:].any()
    assert frozen.base_sha256 == sha256_file(params.paths.base(0).base_model)
    assert frozen.normalizer.base_sha256 == frozen.base_sha256


def test_sequence_surprisal_is_the_examples_table_sum(tiny_pipeline):
    params = tiny_pipeline
    split = _split(params, "test")
    frozen = load_frozen(params.paths.base(0), split, _width(params))
    examples = read_table(
        Path(params.paths.base(0).surprisal_dir) / "examples.parquet", EXAMPLES_SCHEMA
    )
    stored = dict(
        zip(examples["example_id"].to_pylist(), examples["surprisal_sum"].to_pylist(), strict=True)
    )
    expected = np.array([stored[int(i)] for i in split.example_id])
    assert frozen.sequence_surprisal.dtype == np.float64
    np.testing.assert_allclose(frozen.sequence_surprisal, expected, rtol=0, atol=1e-9)


def test_a_different_base_checkpoint_is_refused_naming_both_hashes(tiny_pipeline, tmp_path):
    params = _copy_pipeline(tiny_pipeline, tmp_path / "copy")
    recorded = sha256_file(params.paths.base(0).base_model)
    base = load_base(params.paths.base(0).base_model)
    with torch.no_grad():
        base.head.bias.add_(PERTURBATION)
    save_base(params.paths.base(0).base_model, base)
    replaced = sha256_file(params.paths.base(0).base_model)
    assert replaced != recorded
    with pytest.raises(ProvenanceError) as err:
        load_frozen(params.paths.base(0), _split(params, "train"), _width(params))
    assert recorded in str(err.value)
    assert replaced in str(err.value)


def test_a_normalizer_from_another_base_is_refused(tiny_pipeline, tmp_path):
    params = _copy_pipeline(tiny_pipeline, tmp_path / "copy")
    path = Path(params.paths.base(0).normalizer)
    raw = json.loads(path.read_text())
    raw["base_sha256"] = "0" * 64
    path.write_text(json.dumps(raw))
    with pytest.raises(ProvenanceError, match="0" * 64):
        load_frozen(params.paths.base(0), _split(params, "train"), _width(params))


@pytest.mark.parametrize("drop", ["last_position", "whole_example"])
def test_a_tokens_table_missing_positions_is_refused(tiny_pipeline, tmp_path, drop):
    params = _copy_pipeline(tiny_pipeline, tmp_path / "copy")
    split = _split(params, "val")
    victim = int(split.example_id[3])
    path = Path(params.paths.base(0).surprisal_dir) / "tokens.parquet"
    table = read_table(path, TOKENS_SCHEMA)
    is_victim = pc.equal(table["example_id"], victim)
    if drop == "last_position":
        last = int(split.y_len[3])  # EOS sits at position y_len
        is_victim = pc.and_(is_victim, pc.equal(table["position"], last))
    kept = table.filter(pc.invert(is_victim))
    assert kept.num_rows < table.num_rows
    write_table(kept, path, TOKENS_SCHEMA, table_metadata(path))
    with pytest.raises(DataError, match=f"example {victim}"):
        load_frozen(params.paths.base(0), split, _width(params))
