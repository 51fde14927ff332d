"""Helpers of the params tests: edit a parsed params mapping, expect one exact error."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from zgain.core.errors import ParamsError
from zgain.params import parse_params

DELETE = object()  # sentinel: remove the key instead of setting it
REPO_PARAMS = Path(__file__).resolve().parents[2] / "params.yaml"
DEFAULT_LENGTH_MAX = yaml.safe_load(REPO_PARAMS.read_text())["data"]["length_max"]
VARIANTS = (
    "token_mean, token_sum, dist_normalized, example_inverse, token_share, token_share_cc, "
    "token_inverse_cc, mean_ex, mean_tok, mean_cc, mean_inv"
)
TRANSFORM_NAMES = "['copy', 'double', 'drop_first', 'reverse', 'rotate', 'shift']"


def edit(raw: dict, dotted: str, value: Any) -> dict:
    """Set (or delete, with DELETE) the key at a dotted path of a parsed params mapping."""
    *parents, last = dotted.split(".")
    node = raw
    for key in parents:
        node = node[key]
    if value is DELETE:
        del node[last]
    else:
        node[last] = value
    return raw


def edit_all(raw: dict, edits: dict[str, Any]) -> dict:
    """`edit` for each dotted key of `edits`, in order."""
    for dotted, value in edits.items():
        edit(raw, dotted, value)
    return raw


def fails_with(raw: object, message: str, whole: bool = True):
    """Assert that parsing `raw` raises ParamsError with exactly `message` (or starting with it)."""
    pattern = "^" + re.escape(message) + ("$" if whole else "")
    with pytest.raises(ParamsError, match=pattern):
        parse_params(raw)


def error_lines(raw: object) -> list[str]:
    """The lines of the ParamsError that parsing `raw` raises."""
    with pytest.raises(ParamsError) as caught:
        parse_params(raw)
    return list(caught.value.lines)
