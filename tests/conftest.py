"""Shared fixtures: the default params as parsed YAML, a tiny world, a tiny pipeline run."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import torch
import yaml

from zgain.base.model import BaseLM
from zgain.core.sequences import SeqBatch, pack
from zgain.core.vocab import Vocab
from zgain.params import DataParams, TransformerConfig

REPO_ROOT = Path(__file__).resolve().parents[1]
# Stage modules (`stages/*.py`) live beside the package, not inside it.
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from zgain.params.profile import merge  # noqa: E402  (the one params merge, shared with bench/)


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


def tiny_params_raw(root: Path | None = None) -> dict:
    """params.yaml with the tiny test profile applied; paths moved under `root` when given."""
    raw = yaml.safe_load((REPO_ROOT / "params.yaml").read_text())
    raw = merge(raw, yaml.safe_load((REPO_ROOT / "tests" / "tiny_profile.yaml").read_text()))
    if root is not None:
        raw["paths"] = {key: str(root / value) for key, value in raw["paths"].items()}
    return raw


@pytest.fixture(scope="session")
def tiny_pipeline(tmp_path_factory: pytest.TempPathFactory):
    """generate → train_base → surprisal → normalizer of the screening base (0) run on the tiny
    profile in a temp dir."""
    from stages import generate, normalizer, surprisal, train_base
    from zgain.params import parse_params

    root = tmp_path_factory.mktemp("pipeline")
    params = parse_params(tiny_params_raw(root))
    generate.run(params.data, Path(params.paths.synthetic_dir))
    train_base.run(params, 0)
    surprisal.run(params, 0)
    normalizer.run(params, 0)
    return params


@pytest.fixture(scope="session")
def tiny_runs(tiny_pipeline):
    """Every tiny screening variant × rate × seed trained and evaluated on top of `tiny_pipeline`,
    one group (base 0, variant, seed) per stage call as the DAG runs them."""
    from stages import evaluate, train_cvae
    from zgain.core.runs import Group

    params = tiny_pipeline
    for variant in params.cvae.variants:
        for seed in params.cvae.seeds:
            train_cvae.run(params, Group.screening(0, variant, seed))
            evaluate.run(params, Group.screening(0, variant, seed))
    return params


# --- a tiny model and batch for model tests (tests/base, tests/cvae) -------------------------

MODEL_VOCAB = Vocab(n_content=6)
MODEL_MAX_X, MODEL_MAX_Y = 5, 4
MODEL_SEQ_LEN = MODEL_MAX_X + MODEL_MAX_Y + 1  # decoder input length X + T


def small_base_config(dropout: float = 0.0) -> TransformerConfig:
    return TransformerConfig(d_model=16, n_layers=2, n_heads=2, d_ff=32, dropout=dropout)


def make_small_base(seed: int = 0) -> BaseLM:
    torch.manual_seed(seed)
    return BaseLM(small_base_config(), MODEL_VOCAB, MODEL_SEQ_LEN).eval()


def random_batch(seed: int = 1, batch_size: int = 4) -> SeqBatch:
    """Random (x, y) pairs of random lengths, packed in the small model's frames."""
    gen = torch.Generator().manual_seed(seed)
    x = torch.randint(0, MODEL_VOCAB.n_content, (batch_size, MODEL_MAX_X), generator=gen)
    y = torch.randint(0, MODEL_VOCAB.n_content, (batch_size, MODEL_MAX_Y), generator=gen)
    x_len = torch.randint(1, MODEL_MAX_X + 1, (batch_size,), generator=gen)
    y_len = torch.randint(0, MODEL_MAX_Y + 1, (batch_size,), generator=gen)
    return pack(x, x_len, y, y_len, vocab=MODEL_VOCAB, max_x_len=MODEL_MAX_X, max_y_len=MODEL_MAX_Y)


def upstream_copy(params, dest: Path, rates: list[float], variants: dict | None = None):
    """The upstream artefacts of a tiny pipeline copied under `dest` (no CVAE runs), with these
    target rates and `variants` added to cvae.variants."""
    from zgain.params import parse_params

    root = Path(os.path.commonpath(list(params.paths.model_dump().values())))
    shutil.copytree(root, dest)
    raw = tiny_params_raw(dest)
    raw["cvae"]["rates"] = rates
    raw["cvae"]["variants"] |= variants or {}
    copy = parse_params(raw)
    for produced in (copy.paths.cvae_dir, copy.paths.cvae_live, copy.paths.eval_dir):
        shutil.rmtree(produced, ignore_errors=True)
    return copy


def committed_repo(
    root: Path, monkeypatch: pytest.MonkeyPatch, write: Callable[[Path], None]
) -> Path:
    """For the `zgain check` tests: a git repository at root whose one commit holds a
    params.yaml and what `write` puts there; the working directory moves to it."""

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)

    git("init", "-q")
    (root / "params.yaml").write_text("report:\n  confidence: 0.95\n")
    write(root)
    git("add", "-A")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "committed run")
    monkeypatch.chdir(root)
    return root
