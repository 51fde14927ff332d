"""Profiles: overrides merged into params.yaml (the tiny test profile, the CMUdict example)."""

from __future__ import annotations

from pathlib import Path

import yaml
from conftest import REPO_ROOT

from zgain.params import PairsParams, parse_params
from zgain.params.profile import merge, write_profile


def test_merge_is_deep_but_replaces_lists_and_variants() -> None:
    base = {"a": {"b": 1, "c": [1, 2]}, "cvae": {"variants": {"x": 1, "y": 2}, "seeds": [0]}}
    out = merge(base, {"a": {"c": [3]}, "cvae": {"variants": {"z": 3}}})
    assert out == {"a": {"b": 1, "c": [3]}, "cvae": {"variants": {"z": 3}, "seeds": [0]}}
    assert base["a"]["c"] == [1, 2]  # the base is not mutated


def test_a_data_block_of_another_source_replaces_the_synthetic_one() -> None:
    base = {"data": {"seed": 0, "noise": 0.1, "transforms": ["copy"]}}
    pairs = {"data": {"source": "pairs", "file": "pairs/x.tsv"}}
    assert merge(base, pairs) == pairs
    same = {"data": {"noise": 0.2}}
    assert merge(base, same)["data"] == {"seed": 0, "noise": 0.2, "transforms": ["copy"]}


def test_the_cmudict_profile_gives_valid_params(tmp_path: Path) -> None:
    out = tmp_path / "params.yaml"
    write_profile(REPO_ROOT / "params.yaml", REPO_ROOT / "examples/cmudict/profile.yaml", out)
    params = parse_params(yaml.safe_load(out.read_text()))
    assert isinstance(params.data, PairsParams) and params.data.oracle is not None
    assert params.data.tokenizers == ("char", "whitespace")
