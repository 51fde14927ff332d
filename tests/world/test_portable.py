"""Tests for `zgain.world.portable`: accuracy against Python's `math`, the special values, and
`generate` writing the same bytes whichever vector path numpy takes."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.special import logsumexp as scipy_logsumexp

from zgain.world import portable

ROOT = Path(__file__).resolve().parents[2]


def ulps(got: np.ndarray, expected: np.ndarray) -> np.ndarray:
    return np.abs(got - expected) / np.spacing(np.abs(expected))


def test_exp_is_within_one_ulp_of_math_exp() -> None:
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.uniform(-700, 700, 20_000), rng.uniform(-5, 5, 20_000), [0.0]])
    expected = np.array([math.exp(v) for v in x])
    assert ulps(portable.exp(x), expected).max() <= 1


def test_log_is_within_four_ulps_of_math_log() -> None:
    rng = np.random.default_rng(1)
    x = np.concatenate([np.exp(rng.uniform(-700, 700, 20_000)), rng.uniform(1e-9, 3, 20_000)])
    expected = np.array([math.log(v) for v in x])
    nonzero = expected != 0
    assert ulps(portable.log(x)[nonzero], expected[nonzero]).max() <= 4
    assert portable.log(1.0) == 0.0


def test_special_values_follow_ieee() -> None:
    got = portable.exp(np.array([-np.inf, np.inf, np.nan, 800.0, -800.0]))
    np.testing.assert_array_equal(got, [0.0, np.inf, np.nan, np.inf, 0.0])
    got = portable.log(np.array([0.0, -1.0, np.inf, np.nan]))
    np.testing.assert_array_equal(got, [-np.inf, np.nan, np.inf, np.nan])


def test_logsumexp_matches_scipy_and_keeps_all_minus_inf_rows() -> None:
    a = np.random.default_rng(2).normal(scale=5, size=(500, 4, 3))
    a[0, :, 0] = -np.inf
    a[1, 2, 1] = -np.inf
    got = portable.logsumexp(a, axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = scipy_logsumexp(a, axis=1)
    assert got[0, 0] == -np.inf
    np.testing.assert_allclose(got, expected, rtol=1e-15, atol=1e-14)
    assert portable.logsumexp(a, axis=1, keepdims=True).shape == (500, 1, 3)


@pytest.mark.parametrize("denominator", [7, 16, 30])
def test_cos_of_exact_fractions_of_a_turn(denominator: int) -> None:
    j = np.arange(-2 * denominator, 3 * denominator)
    expected = np.array([math.cos(2 * math.pi * (v % denominator) / denominator) for v in j])
    np.testing.assert_allclose(portable.cos_turns(j, denominator), expected, rtol=0, atol=1e-15)
    # exact where cos is exact
    assert portable.cos_turns(np.array([0, denominator // 2]), 2 * (denominator // 2)).tolist() == [
        1.0,
        -1.0,
    ]


# One split of the default world (a smaller n) hashed over its Parquet bytes.
GENERATE_HASH = """
import hashlib, sys, tempfile
from pathlib import Path
from stages.generate import run
from zgain.params import load_params
sizes = {"n_train": 20000, "n_val": 10, "n_test": 10}
data = load_params(sys.argv[1]).data.model_copy(update=sizes)
out = Path(tempfile.mkdtemp()) / "synthetic"
run(data, out)
print(hashlib.md5((out / "train.parquet").read_bytes()).hexdigest())
"""


def generate_hash(disabled: list[str]) -> str:
    env = {**os.environ, "NPY_DISABLE_CPU_FEATURES": " ".join(disabled)}
    if not disabled:
        env.pop("NPY_DISABLE_CPU_FEATURES")
    done = subprocess.run(
        [sys.executable, "-c", GENERATE_HASH, str(ROOT / "params.yaml")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip().splitlines()[-1]


def test_generate_writes_the_same_bytes_on_every_numpy_vector_path() -> None:
    from numpy._core import _multiarray_umath as umath

    dispatched = [f for f in umath.__cpu_dispatch__ if umath.__cpu_features__.get(f)]
    if not dispatched:
        pytest.skip("numpy dispatches no vector path on this CPU: nothing to switch off")
    # e.g. AVX-512 off (the AVX2 path), then AVX2 off as well (the baseline path)
    hashes = {generate_hash(dispatched[i:]) for i in range(len(dispatched))}
    hashes.add(generate_hash([]))
    assert len(hashes) == 1
