"""Params profiles: a file of overrides merged into params.yaml (the tiny test profile, the
CMUdict example's profile). Not read by any stage: a profile is merged before a run."""

from __future__ import annotations

import copy
from pathlib import Path

import yaml

WHOLE = ("variants",)
"""Mappings a profile replaces whole rather than merges key by key."""


def merge(base: dict, overrides: dict) -> dict:
    """`base` with `overrides` applied recursively. Lists, `variants`, and a `data` block of
    another `source` (its keys differ) are replaced whole."""
    out = copy.deepcopy(base)
    for key, value in overrides.items():
        old = out.get(key)
        other_source = (
            key == "data"
            and isinstance(value, dict)
            and isinstance(old, dict)
            and value.get("source", "synthetic") != old.get("source", "synthetic")
        )
        if (
            isinstance(value, dict)
            and isinstance(old, dict)
            and key not in WHOLE
            and not other_source
        ):
            out[key] = merge(old, value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def write_profile(params: Path, profile: Path, out: Path) -> dict:
    """Write `params` with `profile` merged in to `out` (YAML); the merged mapping."""
    merged = merge(yaml.safe_load(params.read_text()), yaml.safe_load(profile.read_text()))
    out.write_text(yaml.safe_dump(merged, sort_keys=False, allow_unicode=True))
    return merged
