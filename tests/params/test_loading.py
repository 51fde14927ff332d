"""zgain.params: the default params load, files are read as DVC reads them, and every problem is
reported at once, one line each, from a stage too."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from params_edit import (
    REPO_PARAMS,
    VARIANTS,
    edit,
)
from pydantic import ValidationError

from zgain.core.errors import ParamsError
from zgain.params import DataParams, Params, load_params, parse_params
from zgain.world.synthetic import World

# --- the defaults ------------------------------------------------------------------------------


def test_default_params_load(default_params_raw: dict) -> None:
    params = parse_params(default_params_raw)
    assert isinstance(params, Params)
    assert params.data.transforms == ("copy", "reverse", "shift", "drop_first")
    assert params.data.noise == default_params_raw["data"]["noise"]
    assert params.cvae.seeds == tuple(default_params_raw["cvae"]["seeds"])
    assert params.cvae.rates == tuple(default_params_raw["cvae"]["rates"])
    assert list(params.cvae.variants) == VARIANTS.split(", ")
    assert params.cvae.variant("token_sum").weights == {"sum": 1.0}
    assert params.cvae.variants["token_sum"].beta is None
    assert params.cvae.variant("token_sum").beta == params.cvae.default_beta  # resolved
    assert params.report.baseline_variant in params.cvae.variants
    raw_data = default_params_raw["data"]
    assert params.data.sizes() == {s: raw_data[f"n_{s}"] for s in ("train", "val", "test")}


def test_default_params_file_loads(default_params_raw: dict) -> None:
    from_repo = load_params(REPO_PARAMS)
    assert from_repo == parse_params(default_params_raw)


def test_params_are_frozen(default_params_raw: dict) -> None:
    params = parse_params(default_params_raw)
    with pytest.raises(ValidationError, match="frozen"):
        params.data.noise = 0.5  # type: ignore[misc]


def test_int_accepted_where_a_number_is_expected(default_params_raw: dict) -> None:
    params = parse_params(edit(default_params_raw, "cvae.common.beta", 2))
    assert params.cvae.common.beta == 2.0 and isinstance(params.cvae.common.beta, float)


def test_per_variant_overrides_load(default_params_raw: dict) -> None:
    edit(default_params_raw, "cvae.variants.token_sum.beta", 0.25)
    edit(default_params_raw, "cvae.variants.token_sum.unified", {"alpha": 1.0, "gamma": 1})
    variant = parse_params(default_params_raw).cvae.variant("token_sum")
    assert variant.beta == 0.25
    assert variant.unified.alpha == 1.0 and variant.unified.gamma == 1.0
    assert variant.unified.eta == 0.0  # unset fields keep their defaults


def test_data_params_build_their_world(default_params_raw: dict) -> None:
    data = parse_params(default_params_raw).data
    world = World.from_params(data)
    assert world.transforms == data.transforms
    assert world.vocab_size == data.vocab_size and world.noise == data.noise
    assert world.max_y_len == data.length_max  # no transform lengthens y


# --- the file loader ------------------------------------------------------------------------


def test_load_params_reports_bad_values_in_a_file(tmp_path: Path, default_params_raw: dict) -> None:
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(edit(default_params_raw, "data.noise", 1.5)))
    with pytest.raises(
        ParamsError, match="^" + re.escape("data.noise: must be in [0, 1), got 1.5") + "$"
    ):
        load_params(path)


def test_load_params_reports_invalid_yaml(tmp_path: Path) -> None:
    path = tmp_path / "params.yaml"
    path.write_text("data: [unclosed\n")
    with pytest.raises(ParamsError, match="^" + re.escape(f"{path}: not valid YAML")):
        load_params(path)


def test_data_params_constructed_directly_are_validated(tiny_data_params: DataParams) -> None:
    fields = tiny_data_params.model_dump() | {"transforms": ("copy",)}
    with pytest.raises(ValidationError, match=re.escape("needs at least 2 strategies")):
        DataParams(**fields)


# --- every problem at once, YAML as DVC reads it, one-line errors from a stage ---------------


def test_every_problem_is_reported_at_once(default_params_raw: dict) -> None:
    edit(default_params_raw, "data.noise", 1.5)
    edit(default_params_raw, "base.lr", "fast")
    edit(default_params_raw, "cvae.common.bta", 0.5)
    with pytest.raises(ParamsError) as caught:
        parse_params(default_params_raw)
    assert caught.value.lines == (
        "data.noise: must be in [0, 1), got 1.5",
        "base.lr: must be a number, got 'fast'",
        caught.value.lines[2],
    )
    assert caught.value.lines[2].startswith("cvae.common.bta: unknown key (known: ")


def test_exponent_notation_is_a_number_as_in_dvc(tmp_path: Path, default_params_raw: dict) -> None:
    text = yaml.safe_dump(default_params_raw).replace("lr: 0.004", "lr: 3e-3")
    assert "lr: 3e-3" in text
    path = tmp_path / "params.yaml"
    path.write_text(text)
    assert load_params(path).cvae.common.lr == 0.003


def test_a_stage_prints_params_errors_as_lines_without_traceback(
    tmp_path: Path, default_params_raw: dict
) -> None:
    edit(default_params_raw, "data.noise", 1.5)
    edit(default_params_raw, "base.model.n_heads", 3)
    edit(default_params_raw, "cvea", {"common": {"beta": 0.5}})
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(default_params_raw))
    done = subprocess.run(
        [sys.executable, "-m", "stages.generate"],
        cwd=tmp_path,
        env={"PYTHONPATH": str(REPO_PARAMS.parent)},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert lines[:2] == [
        "error: data.noise: must be in [0, 1), got 1.5",
        "error: base.model.n_heads: must divide d_model (64), got 3",
    ]
    assert lines[2].startswith("error: cvea: unknown key (known: base, cvae, data, ")
    assert len(lines) == 3
