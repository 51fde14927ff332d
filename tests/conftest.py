"""Shared fixtures: the default params as parsed YAML and a tiny synthetic world."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml

from zgain.params import DataParams

REPO_ROOT = Path(__file__).resolve().parents[1]
# Stage modules (`stages/*.py`) live beside the package, not inside it.
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))


@pytest.fixture
def default_params_raw() -> dict:
    """`params.yaml` of the repository, parsed into plain Python (a fresh copy per test)."""
    return yaml.safe_load((REPO_ROOT / "params.yaml").read_text())


@pytest.fixture
def tiny_data_params() -> DataParams:
    """A small world with a length-changing transform, noise and an x-dependent prior."""
    return DataParams(
        seed=3,
        vocab_size=5,
        length_min=1,
        length_max=4,
        transforms=("copy", "reverse", "shift", "drop_first", "double"),
        shift=2,
        prior="x_dependent",
        prior_temperature=0.5,
        noise=0.1,
        n_train=64,
        n_val=16,
        n_test=24,
    )
