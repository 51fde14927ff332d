"""Facts about test-split evaluation: the per-example table, its metrics, the init.

See docs/method.md#evaluation-quantities.
"""

from __future__ import annotations

import json
import math
import os
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
import torch
from conftest import tiny_params_raw

from stages import evaluate
from zgain.base.model import load_base
from zgain.base.schema import EXAMPLES_SCHEMA
from zgain.core.errors import ProvenanceError
from zgain.core.io import read_table, run_dir, sha256_file
from zgain.cvae.model import CVAE, kl_diag_gaussians, load_cvae, save_cvae
from zgain.evaluate.schema import ENVIRONMENT_KEY, EVAL_SCHEMA
from zgain.evaluate.scoring import evaluate_examples, shuffle_partner
from zgain.params import Params, parse_params
from zgain.world.packed import load_packed
from zgain.world.splits import load_split
from zgain.world.synthetic import World

TINY = tiny_params_raw()
RUNS = [(variant, seed) for variant in TINY["cvae"]["variants"] for seed in TINY["cvae"]["seeds"]]
INIT_TOL = 1e-5  # nats: the same float32 forward pass in a different batching
SUM_TOL = 1e-9  # float64 sums of the same values in another order
FLOAT32_SUM_TOL = 1e-5  # nats: L_i is summed over tokens in float32, token_gain in float64
CPU = torch.device("cpu")


def _copy_pipeline(params: Params, dest: Path) -> Params:
    """The fixture's artefacts copied under `dest`, with params pointing at the copy."""
    root = Path(os.path.commonpath(list(params.paths.model_dump().values())))
    shutil.copytree(root, dest)
    return parse_params(tiny_params_raw(dest))


def _eval_table(params: Params, variant: str, seed: int) -> pd.DataFrame:
    path = run_dir(params.paths.eval_dir, variant, seed) / "examples.parquet"
    return read_table(path, EVAL_SCHEMA).to_pandas()


def _eval_metrics(params: Params, variant: str, seed: int) -> dict[str, object]:
    path = run_dir(params.paths.eval_dir, variant, seed) / "metrics.json"
    return json.loads(path.read_text())


def _world(params: Params) -> World:
    return World.from_params(params.data)


def _test_split(params: Params):
    return load_split(Path(params.paths.synthetic_dir) / "test.parquet", _world(params))


@pytest.mark.parametrize(("variant", "seed"), RUNS)
def test_table_has_the_schema_and_one_row_per_test_example(tiny_runs, variant, seed):
    path = run_dir(tiny_runs.paths.eval_dir, variant, seed) / "examples.parquet"
    assert pq.read_schema(path).remove_metadata() == EVAL_SCHEMA
    table = _eval_table(tiny_runs, variant, seed)
    split = _test_split(tiny_runs)
    assert table["example_id"].tolist() == split.example_id.tolist()
    assert (table["variant"] == variant).all()
    assert (table["seed"] == seed).all()
    assert table["strategy"].tolist() == split.strategy.tolist()
    assert table["n_tokens"].tolist() == (split.y_len + 1).tolist()
    assert table["token_gain"].map(len).tolist() == table["n_tokens"].tolist()
    assert table["revealed"].map(len).tolist() == table["n_tokens"].tolist()


@pytest.mark.parametrize(("variant", "seed"), RUNS)
def test_per_example_gains_are_consistent(tiny_runs, variant, seed):
    table = _eval_table(tiny_runs, variant, seed)
    np.testing.assert_allclose(table["gain"], table["surprisal_sum"] - table["nll_post"], atol=0)
    token_gain_sum = table["token_gain"].map(np.sum)
    np.testing.assert_allclose(token_gain_sum, table["gain"], atol=FLOAT32_SUM_TOL, rtol=0)
    np.testing.assert_allclose(table["nll_post_mean"], table["nll_post"] / table["n_tokens"])
    np.testing.assert_allclose(table["surprisal_mean"], table["surprisal_sum"] / table["n_tokens"])
    examples = read_table(
        Path(tiny_runs.paths.surprisal_dir) / "examples.parquet", EXAMPLES_SCHEMA
    ).to_pandas()
    test_rows = examples[examples["split"] == "test"].set_index("example_id")
    frozen = test_rows.loc[table["example_id"]]
    np.testing.assert_allclose(table["surprisal_sum"], frozen["surprisal_sum"], rtol=SUM_TOL)
    np.testing.assert_array_equal(table["oracle_nll"], frozen["oracle_nll"])
    np.testing.assert_array_equal(table["oracle_info"], frozen["oracle_info"])
    assert (table["kl"] >= 0).all()


@pytest.mark.parametrize(("variant", "seed"), RUNS)
def test_metrics_json_recomputes_from_the_table(tiny_runs, variant, seed):
    t = _eval_table(tiny_runs, variant, seed)
    metrics = _eval_metrics(tiny_runs, variant, seed)
    base, post = t["surprisal_sum"], t["nll_post"]
    gain_z = (t["nll_shuffled"] - post).mean()
    expected = {
        "gain_gross_nats_seq": t["gain"].mean(),
        "gain_gross_nats_tok": t["gain"].sum() / t["n_tokens"].sum(),
        "gain_gross_bits_seq": t["gain"].mean() / math.log(2.0),
        "gain_z_nats_seq": gain_z,
        "gain_net_nats_seq": (t["gain"] - t["kl"]).mean(),
        "gain_iw_nats_seq": (base + t["log_lik_iw"]).mean(),
        "gain_prior_nats_seq": (base - t["nll_prior"]).mean(),
        "gain_zero_nats_seq": (base - t["nll_zero"]).mean(),
        "frac_gain_pop": 1.0 - post.sum() / base.sum(),
        "frac_gain_ex": (1.0 - post / base).mean(),
        "frac_gain_pop_tok": 1.0 - t["nll_post_mean"].sum() / t["surprisal_mean"].sum(),
        "capture_ratio": gain_z / t["oracle_info"].mean(),
        "oracle_info_nats": t["oracle_info"].mean(),
        "base_excess_nats": base.mean() - t["oracle_nll"].mean(),
        "kl_nats": t["kl"].mean(),
        "n_examples": float(len(t)),
    }
    for key, value in expected.items():
        assert metrics[key] == pytest.approx(value, rel=1e-9, abs=1e-12), key
    # Beside the metrics, what the run ran on (recorded, never a param).
    assert set(metrics[ENVIRONMENT_KEY]) == {"device", "dtype", "threads", "torch_version"}


def _untrained_checkpoint(params: Params, variant: str, seed: int, *, zero_posterior: bool) -> CVAE:
    """Save a CVAE straight after its entangled init where the evaluate stage looks for it."""
    torch.manual_seed(seed)
    model = CVAE(load_base(params.paths.base_model), params.cvae.common.model)
    if zero_posterior:
        # q(z|x,y) = N(0, I): the standard prior itself.
        torch.nn.init.zeros_(model.posterior_encoder.out.weight)
        torch.nn.init.zeros_(model.posterior_encoder.out.bias)
    extra = {"variant": variant, "seed": seed, "base_sha256": sha256_file(params.paths.base_model)}
    save_cvae(run_dir(params.paths.cvae_dir, variant, seed).with_suffix(".pt"), model, extra=extra)
    return model


def test_at_the_entangled_init_every_gain_is_zero(tiny_pipeline, tmp_path):
    """z is ignored at init, so every decoder NLL equals B; KL is that of the random q."""
    params = _copy_pipeline(tiny_pipeline, tmp_path / "copy")
    variant, seed = RUNS[0]
    assert params.cvae.common.model.prior == "standard"
    model = _untrained_checkpoint(params, variant, seed, zero_posterior=False)
    metrics = evaluate.run(params, variant, seed)
    table = _eval_table(params, variant, seed)
    base = table["surprisal_sum"]
    for column in ("nll_post", "nll_prior", "nll_shuffled", "nll_zero"):
        np.testing.assert_allclose(table[column], base, atol=INIT_TOL, err_msg=column)
    np.testing.assert_allclose(table["gain"], 0.0, atol=INIT_TOL)
    np.testing.assert_allclose(np.concatenate(table["token_gain"].to_list()), 0.0, atol=INIT_TOL)
    for gain in ("gross", "z", "prior", "zero"):
        assert abs(metrics[f"gain_{gain}_nats_seq"]) <= INIT_TOL, gain
    # The posterior encoder starts random, not at N(0, I): KL is its closed form against N(0, I).
    _, batch = load_packed(params.paths.synthetic_dir, "test", _world(params))
    with torch.no_grad():
        mu, logvar = model.posterior(batch.encoder_input)
    closed_form = kl_diag_gaussians(mu, logvar, torch.zeros_like(mu), torch.zeros_like(logvar))
    np.testing.assert_allclose(
        table["kl"], closed_form.sum(1).double().numpy(), rtol=1e-5, atol=1e-9
    )


def test_with_q_equal_to_the_standard_prior_kl_is_zero_and_iw_is_minus_b(tiny_pipeline, tmp_path):
    """With q = p = N(0, I) every importance weight p(z)/q(z) is 1, so log p̂_K = −L = −B."""
    params = _copy_pipeline(tiny_pipeline, tmp_path / "copy")
    variant, seed = RUNS[0]
    _untrained_checkpoint(params, variant, seed, zero_posterior=True)
    metrics = evaluate.run(params, variant, seed)
    table = _eval_table(params, variant, seed)
    np.testing.assert_array_equal(table["kl"], 0.0)
    np.testing.assert_allclose(table["log_lik_iw"], -table["surprisal_sum"], atol=INIT_TOL)
    assert metrics["kl_nats"] == 0.0
    assert abs(metrics["gain_iw_nats_seq"]) <= INIT_TOL


@pytest.mark.parametrize("recorded", ["0" * 64, None])
def test_a_checkpoint_from_another_base_is_refused(tiny_pipeline, tmp_path, recorded):
    params = _copy_pipeline(tiny_pipeline, tmp_path / "copy")
    variant, seed = RUNS[0]
    model = CVAE(load_base(params.paths.base_model), params.cvae.common.model)
    extra = {"variant": variant, "seed": seed}
    if recorded is not None:
        extra["base_sha256"] = recorded
    checkpoint = run_dir(params.paths.cvae_dir, variant, seed).with_suffix(".pt")
    save_cvae(checkpoint, model, extra=extra)
    with pytest.raises(ProvenanceError, match=str(checkpoint)):
        evaluate.run(params, variant, seed)


@pytest.mark.parametrize("n", [2, 3, 7, 100])
def test_shuffle_partner_is_a_single_cycle_without_fixed_points(n):
    for seed in range(5):
        partner = shuffle_partner(n, torch.Generator().manual_seed(seed)).tolist()
        assert sorted(partner) == list(range(n))
        assert all(partner[i] != i for i in range(n))
        # A rotation of a random order: following partners from 0 visits every example.
        seen, i = set(), 0
        while i not in seen:
            seen.add(i)
            i = partner[i]
        assert len(seen) == n


def test_shuffle_partner_needs_two_examples():
    with pytest.raises(ValueError, match="at least 2"):
        shuffle_partner(1, torch.Generator().manual_seed(0))


def test_evaluation_is_deterministic_for_a_fixed_seed(tiny_runs):
    params = tiny_runs
    variant, seed = RUNS[0]
    model, _ = load_cvae(run_dir(params.paths.cvae_dir, variant, seed).with_suffix(".pt"))
    _, batch = load_packed(params.paths.synthetic_dir, "test", _world(params))
    settings = params.evaluate

    def scores(eval_seed: int):
        return evaluate_examples(
            model,
            batch,
            posterior_samples=settings.posterior_samples,
            iw_samples=settings.iw_samples,
            batch_size=settings.batch_size,
            max_x_len=_world(params).max_x_len,
            device=CPU,
            seed=eval_seed,
        )

    first, second, other = scores(settings.seed), scores(settings.seed), scores(settings.seed + 1)
    for name in first._fields:
        np.testing.assert_array_equal(getattr(first, name), getattr(second, name), err_msg=name)
    # The seed is what fixes the samples: another seed draws other z.
    assert not np.array_equal(first.log_lik_iw, other.log_lik_iw)
    # The stage's own output is what these scores give.
    table = _eval_table(params, variant, seed)
    np.testing.assert_array_equal(table["nll_post"], first.nll_post)
    np.testing.assert_array_equal(table["log_lik_iw"], first.log_lik_iw)
