"""zgain.params: a value of the wrong type, an unknown key and a missing key each name the key
path."""

from __future__ import annotations

from typing import Any

import pytest
from params_edit import (
    DELETE,
    edit,
    fails_with,
)

from zgain.core.errors import ParamsError
from zgain.params import parse_params

# --- types ----------------------------------------------------------------------------------

TYPE_ERRORS = [
    ("data.vocab_size", "16", "data.vocab_size: must be an integer, got '16'"),
    ("data.vocab_size", True, "data.vocab_size: must be an integer, got True"),
    ("data.vocab_size", 16.0, "data.vocab_size: must be an integer, got 16.0"),
    ("data.vocab_size", None, "data.vocab_size: must be an integer, got None"),
    ("data.noise", "0.05", "data.noise: must be a number, got '0.05'"),
    ("data.noise", False, "data.noise: must be a number, got False"),
    ("data.transforms", "copy", "data.transforms: must be a list, got 'copy'"),
    ("data.transforms", ["copy", 3], "data.transforms[1]: must be a string, got 3"),
    (
        "data.prior",
        "gaussian",
        "data.prior: must be one of ['uniform', 'x_dependent'], got 'gaussian'",
    ),
    (
        "cvae.common.model.prior",
        "gaussian",
        "cvae.common.model.prior: must be one of ['standard', 'conditional'], got 'gaussian'",
    ),
    (
        "cvae.common.beta_schedule",
        "cosine",
        "cvae.common.beta_schedule: must be one of ['constant', 'linear', 'cyclical', "
        "'rate_target'], got 'cosine'",
    ),
    ("cvae.seeds", 0, "cvae.seeds: must be a list, got 0"),
    ("cvae.seeds", [0, "1"], "cvae.seeds[1]: must be an integer, got '1'"),
    (
        "cvae.variants.token_sum.beta",
        "big",
        "cvae.variants.token_sum.beta: must be a number, got 'big'",
    ),
    (
        "cvae.variants.token_mean.weights",
        {"mean": True},
        "cvae.variants.token_mean.weights.mean: must be a number, got True",
    ),
    (
        "cvae.variants.token_mean.unified",
        {"concentration": 1},
        "cvae.variants.token_mean.unified.concentration: must be a boolean, got 1",
    ),
    ("cvae.variants", [], "cvae.variants: must be a mapping, got []"),
    ("data", 5, "data: must be a mapping, got 5"),
    ("paths.reports_dir", 7, "paths.reports_dir: must be a string, got 7"),
]


@pytest.mark.parametrize(("key", "value", "message"), TYPE_ERRORS, ids=[e[2] for e in TYPE_ERRORS])
def test_wrong_type_names_key_and_value(
    default_params_raw: dict, key: str, value: Any, message: str
) -> None:
    fails_with(edit(default_params_raw, key, value), message)


def test_root_must_be_a_mapping() -> None:
    fails_with([1, 2], "<root>: must be a mapping, got [1, 2]")


def test_non_string_variant_name_is_an_error(default_params_raw: dict) -> None:
    variants = default_params_raw["cvae"]["variants"]
    variants[1] = variants["token_sum"]
    fails_with(default_params_raw, "cvae.variants.1: key must be a string, got 1")


# --- unknown and missing keys ---------------------------------------------------------------

UNKNOWN_KEYS = [
    ("extra", "extra: unknown key (known: base, cvae, data, evaluate, paths, report, surprisal)"),
    (
        "data.nosie",
        "data.nosie: unknown key (known: decoy_noise, decoy_positions, length_max, length_min, ",
    ),
    ("cvae.common.bta", "cvae.common.bta: unknown key (known: "),
    (
        "cvae.variants.token_mean.wieghts",
        "cvae.variants.token_mean.wieghts: unknown key (known: aggressive, beta, bow_weight, "
        "free_bits, unified, weights, z_memory)",
    ),
    (
        "cvae.variants.token_mean.unified.alhpa",
        "cvae.variants.token_mean.unified.alhpa: unknown key (known: alpha, concentration, eta, "
        "gamma, token_sum)",
    ),
]


@pytest.mark.parametrize(("key", "message"), UNKNOWN_KEYS, ids=[k for k, _ in UNKNOWN_KEYS])
def test_unknown_key_names_its_path(default_params_raw: dict, key: str, message: str) -> None:
    if key.startswith("cvae.variants.token_mean.unified."):
        default_params_raw["cvae"]["variants"]["token_mean"]["unified"] = {}
    fails_with(edit(default_params_raw, key, 0.05), message, whole=False)


def test_unknown_keys_of_mixed_types_name_a_key(default_params_raw: dict) -> None:
    default_params_raw["data"][1] = 2
    default_params_raw["data"]["nosie"] = 0.05
    with pytest.raises(ParamsError) as caught:
        parse_params(default_params_raw)
    assert caught.value.lines[0] == "data.1: key must be a string, got 1"
    assert caught.value.lines[1].startswith("data.nosie: unknown key (known: ")


MISSING_KEYS = [
    "data.noise",
    "data.transforms",
    "report",
    "cvae.common.eps",
    "cvae.variants.token_mean.weights",
]


@pytest.mark.parametrize("key", MISSING_KEYS)
def test_missing_key_names_its_path(default_params_raw: dict, key: str) -> None:
    fails_with(edit(default_params_raw, key, DELETE), f"{key}: missing required key")


def test_optional_keys_may_be_missing_or_null(default_params_raw: dict) -> None:
    edit(default_params_raw, "cvae.variants.token_sum.beta", None)
    params = parse_params(default_params_raw)
    assert params.cvae.variants["token_sum"].beta is None
    assert params.cvae.variants["token_mean"].free_bits is None
