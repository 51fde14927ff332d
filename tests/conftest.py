"""Shared fixtures: the default params as parsed YAML, a tiny world, a tiny pipeline run."""

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


def merge(base: dict, overrides: dict) -> dict:
    """`base` with `overrides` applied recursively; `variants` and lists are replaced whole."""
    out = dict(base)
    for key, value in overrides.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict) and key != "variants":
            out[key] = merge(out[key], value)
        else:
            out[key] = value
    return out


def tiny_params_raw(root: Path | None = None) -> dict:
    """params.yaml with the tiny test profile applied; paths moved under `root` when given."""
    raw = yaml.safe_load((REPO_ROOT / "params.yaml").read_text())
    raw = merge(raw, yaml.safe_load((REPO_ROOT / "tests" / "tiny_profile.yaml").read_text()))
    if root is not None:
        raw["paths"] = {key: str(root / value) for key, value in raw["paths"].items()}
    return raw


@pytest.fixture(scope="session")
def tiny_pipeline(tmp_path_factory: pytest.TempPathFactory):
    """generate → train_base → surprisal → normalizer run on the tiny profile in a temp dir."""
    from stages import generate, normalizer, surprisal, train_base
    from zgain.params import parse_params

    root = tmp_path_factory.mktemp("pipeline")
    params = parse_params(tiny_params_raw(root))
    generate.run(params.data, Path(params.paths.synthetic_dir))
    train_base.run(params)
    surprisal.run(params)
    normalizer.run(params)
    return params


@pytest.fixture(scope="session")
def tiny_runs(tiny_pipeline):
    """Every tiny variant × seed trained and evaluated on top of `tiny_pipeline`."""
    from stages import evaluate, train_cvae

    params = tiny_pipeline
    for variant in params.cvae.variants:
        for seed in params.cvae.seeds:
            train_cvae.run(params, variant, seed)
            evaluate.run(params, variant, seed)
    return params
