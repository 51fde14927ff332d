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
from scipy.stats import spearmanr

from stages import evaluate
from zgain.base.model import load_base
from zgain.base.schema import EXAMPLES_SCHEMA
from zgain.core.environment import resolve_device
from zgain.core.errors import ProvenanceError
from zgain.core.io import read_table, sha256_file
from zgain.core.runs import Group, Run
from zgain.cvae.gaussian import kl_divergence
from zgain.cvae.model import CVAE, load_cvae, save_cvae
from zgain.evaluate.estimators import probe_split
from zgain.evaluate.schema import (
    DECOMPOSITION_KEYS,
    ENVIRONMENT_KEY,
    EVAL_SCHEMA,
    RECOVERY_KEYS,
    USAGE_KEYS,
)
from zgain.evaluate.scoring import evaluate_examples, shuffle_partner
from zgain.params import Params, parse_params
from zgain.world.packed import load_packed
from zgain.world.splits import load_split
from zgain.world.synthetic import World

TINY = tiny_params_raw()
RATE = TINY["cvae"]["rates"][0]
RUNS = [(variant, seed) for variant in TINY["cvae"]["variants"] for seed in TINY["cvae"]["seeds"]]
INIT_TOL = 1e-5  # nats: the float32 decoder against the float32 base, another batching
SUM_TOL = 1e-9  # float64 sums of the same values in another order
CPU = torch.device("cpu")


def _copy_pipeline(params: Params, dest: Path) -> Params:
    """The fixture's artefacts copied under `dest`, with params pointing at the copy."""
    root = Path(os.path.commonpath(list(params.paths.model_dump().values())))
    shutil.copytree(root, dest)
    return parse_params(tiny_params_raw(dest))


def _eval_table(params: Params, variant: str, seed: int) -> pd.DataFrame:
    path = Run(variant, RATE, seed, 0).eval_dir(params.paths.eval_dir) / "examples.parquet"
    return read_table(path, EVAL_SCHEMA).to_pandas()


def _eval_metrics(params: Params, variant: str, seed: int) -> dict[str, object]:
    path = Run(variant, RATE, seed, 0).eval_dir(params.paths.eval_dir) / "metrics.json"
    return json.loads(path.read_text())


def _world(params: Params) -> World:
    return World.from_params(params.data).frames


def _test_split(params: Params):
    return load_split(Path(params.paths.synthetic_dir) / "test.parquet", _world(params))


def _assert_metric(metrics: dict[str, object], key: str, expected: float) -> None:
    """metrics.json writes a non-finite metric as null."""
    if math.isfinite(expected):
        assert metrics[key] == pytest.approx(expected, rel=1e-9, abs=1e-12), key
    else:
        assert metrics[key] is None, key


@pytest.mark.parametrize(("variant", "seed"), RUNS)
def test_table_has_the_schema_and_one_row_per_test_example(tiny_runs, variant, seed):
    path = Run(variant, RATE, seed, 0).eval_dir(tiny_runs.paths.eval_dir) / "examples.parquet"
    assert pq.read_schema(path).remove_metadata() == EVAL_SCHEMA
    table = _eval_table(tiny_runs, variant, seed)
    split = _test_split(tiny_runs)
    assert len(table) == len(split) == tiny_runs.data.n_test
    assert table["example_id"].tolist() == split.example_id.tolist()
    assert (table["variant"] == variant).all()
    assert (table["seed"] == seed).all()
    assert table["strategy"].tolist() == split.strategy.tolist()
    assert table["n_tokens"].tolist() == (split.y_len + 1).tolist()
    assert table["token_z_information"].map(len).tolist() == table["n_tokens"].tolist()
    assert table["oracle_token_info"].map(len).tolist() == table["n_tokens"].tolist()


@pytest.mark.parametrize(("variant", "seed"), RUNS)
def test_per_example_columns_are_consistent(tiny_runs, variant, seed):
    table = _eval_table(tiny_runs, variant, seed)
    # i^θ_t = m_t − ℓ_t sums to M − L; the oracle's token information sums to I*.
    token_sum = table["token_z_information"].map(np.sum)
    np.testing.assert_allclose(
        token_sum, table["nll_marginal"] - table["nll_post"], atol=SUM_TOL, rtol=0
    )
    oracle_sum = table["oracle_token_info"].map(np.sum)
    np.testing.assert_allclose(oracle_sum, table["oracle_info"], atol=SUM_TOL, rtol=0)
    # B, NLL*, I* are those of the frozen base's table for the same examples.
    examples = read_table(
        Path(tiny_runs.paths.base(0).surprisal_dir) / "examples.parquet", EXAMPLES_SCHEMA
    ).to_pandas()
    frozen = examples[examples["split"] == "test"].set_index("example_id").loc[table["example_id"]]
    np.testing.assert_allclose(table["surprisal_sum"], frozen["surprisal_sum"], rtol=SUM_TOL)
    np.testing.assert_array_equal(table["n_tokens"], frozen["n_tokens"])
    np.testing.assert_array_equal(table["oracle_nll"], frozen["oracle_nll"])
    np.testing.assert_array_equal(table["oracle_info"], frozen["oracle_info"])
    assert (table["kl"] >= 0).all()
    assert (table["surprisal_sum"] > 0).all()
    for column in ("nll_post", "nll_marginal", "nll_prior", "nll_shuffled"):
        assert np.isfinite(table[column]).all() and (table[column] > 0).all(), column


@pytest.mark.parametrize(("variant", "seed"), RUNS)
def test_metrics_json_recomputes_from_the_table(tiny_runs, variant, seed):
    t = _eval_table(tiny_runs, variant, seed)
    metrics = _eval_metrics(tiny_runs, variant, seed)
    base, post, marginal = t["surprisal_sum"], t["nll_post"], t["nll_marginal"]
    c_star = t["oracle_nll"] - t["oracle_info"]
    z_info = marginal - post
    expected = {
        "base_nll": base.mean(),
        "posterior_nll": post.mean(),
        "marginal_nll": marginal.mean(),
        "gross_gain": (base - post).mean(),
        "marginal_gain": (base - marginal).mean(),
        "z_information": z_info.mean(),
        "capture": z_info.mean() / t["oracle_info"].mean(),
        "net_gain": (base - post - t["kl"]).mean(),
        "kl": t["kl"].mean(),
        "z_reliance": (t["nll_shuffled"] - post).mean(),
        "prior_sample_gain": (base - t["nll_prior"]).mean(),
        "oracle_nll": t["oracle_nll"].mean(),
        "oracle_info": t["oracle_info"].mean(),
        "oracle_marginal_gain": (base - t["oracle_nll"]).mean(),
        "oracle_gross_gain": (base - c_star).mean(),
        "frac_gain_pop": 1.0 - post.sum() / base.sum(),
        "frac_gain_pop_ceiling": 1.0 - c_star.sum() / base.sum(),
        "frac_gain_ex": (1.0 - post / base).mean(),
        "frac_gain_ex_ceiling": (1.0 - c_star / base).mean(),
        "frac_gain_pop_tok": 1.0 - (post / t["n_tokens"]).sum() / (base / t["n_tokens"]).sum(),
        "frac_gain_pop_tok_ceiling": 1.0
        - (c_star / t["n_tokens"]).sum() / (base / t["n_tokens"]).sum(),
        "frac_z_information": z_info.sum() / base.sum(),
        "frac_z_information_ceiling": t["oracle_info"].sum() / base.sum(),
        "z_information_se": z_info.std(ddof=1) / math.sqrt(len(t)),
        "n_examples": float(len(t)),
        "iw_samples": float(tiny_runs.evaluate.iw_samples),
        "mi_q_cap_nats": math.log(len(t)),
    }
    assert set(DECOMPOSITION_KEYS) <= set(expected)
    for key, value in expected.items():
        _assert_metric(metrics, key, value)
    assert math.isfinite(expected["capture"])  # the tiny world has oracle information
    assert metrics["gross_gain"] == pytest.approx(
        metrics["marginal_gain"] + metrics["z_information"], abs=1e-9
    )
    assert metrics["mi_q_nats"] <= metrics["mi_q_cap_nats"] + 1e-12
    # KL summed over dimensions: the per-dimension means add up to the mean KL (the per-example
    # sum over dimensions is taken in float32).
    dims = [metrics[f"kl_dim_{j}"] for j in range(tiny_runs.cvae.common.model.latent_dim)]
    assert sum(dims) == pytest.approx(metrics["kl"], rel=1e-6)
    assert f"kl_dim_{len(dims)}" not in metrics
    # Beside the metrics, what the run ran on (recorded, never a param).
    environment = metrics[ENVIRONMENT_KEY]
    assert set(environment) == {
        "device", "dtype", "threads", "torch_version", "host", "worker", "cpu_model", "cpu_isa"
    }  # fmt: skip
    assert environment["cpu_isa"].startswith("torch ") and ", numpy " in environment["cpu_isa"]
    assert environment["device"] == str(resolve_device(None))
    if not torch.cuda.is_available() and not torch.backends.mps.is_available():
        assert environment["device"] == "cpu"
        assert environment["dtype"] == "float32"
    for key in (*DECOMPOSITION_KEYS, *RECOVERY_KEYS, *USAGE_KEYS):
        assert key in metrics, key


@pytest.mark.parametrize(("variant", "seed"), RUNS)
def test_token_level_and_recovery_metrics_recompute_from_the_table(tiny_runs, variant, seed):
    t = _eval_table(tiny_runs, variant, seed)
    metrics = _eval_metrics(tiny_runs, variant, seed)
    z_tokens = np.concatenate(t["token_z_information"].to_list())
    oracle_tokens = np.concatenate(t["oracle_token_info"].to_list())
    revealed = oracle_tokens > tiny_runs.evaluate.reveal_min_nats
    assert 0 < revealed.sum() < revealed.size  # the tiny world reveals on some tokens only
    _assert_metric(metrics, "revealed_token_share", revealed.mean())
    _assert_metric(metrics, "localization_share", z_tokens[revealed].sum() / z_tokens.sum())
    _assert_metric(
        metrics, "oracle_localization_share", oracle_tokens[revealed].sum() / oracle_tokens.sum()
    )
    _assert_metric(metrics, "token_info_spearman", spearmanr(z_tokens, oracle_tokens).statistic)
    # Recovery: the floors and ceilings that depend on the world alone.
    split = _test_split(tiny_runs)
    labels = t["strategy"].to_numpy()
    _, held_out = probe_split(
        labels, seed=tiny_runs.evaluate.seed, test_fraction=tiny_runs.evaluate.probe_test_fraction
    )
    _assert_metric(metrics, "probe_ceiling", split.strategy_posterior[held_out].max(axis=1).mean())
    _assert_metric(metrics, "kmeans_accuracy_floor", np.bincount(labels).max() / len(t))
    for key in RECOVERY_KEYS:
        if "nmi" in key or "accuracy" in key or key in ("probe_floor", "probe_ceiling"):
            assert 0.0 <= metrics[key] <= 1.0, key


def _untrained_checkpoint(params: Params, variant: str, seed: int, *, zero_posterior: bool) -> CVAE:
    """Save a CVAE straight after its entangled init where the evaluate stage looks for it."""
    torch.manual_seed(seed)
    model = CVAE(load_base(params.paths.base(0).base_model), params.cvae.common.model)
    if zero_posterior:
        # q(z|x,y) = N(0, I): the standard prior itself.
        torch.nn.init.zeros_(model.posterior_encoder.out.weight)
        torch.nn.init.zeros_(model.posterior_encoder.out.bias)
    extra = {
        "variant": variant,
        "seed": seed,
        "base_sha256": sha256_file(params.paths.base(0).base_model),
    }
    save_cvae(Run(variant, RATE, seed, 0).checkpoint(params.paths.cvae_dir), model, extra=extra)
    return model


def test_at_the_entangled_init_every_code_length_is_b_and_every_gain_is_zero(
    tiny_pipeline, tmp_path
):
    """z is ignored at init, so L = M = L_prior = L_shuf = B; KL is that of the random q."""
    params = _copy_pipeline(tiny_pipeline, tmp_path / "copy")
    variant, seed = RUNS[0]
    assert params.cvae.common.model.prior == "standard"
    model = _untrained_checkpoint(params, variant, seed, zero_posterior=False)
    (metrics,) = evaluate.run(params, Group.screening(0, variant, seed), device="cpu", rates=[RATE])
    table = _eval_table(params, variant, seed)
    base = table["surprisal_sum"]
    for column in ("nll_post", "nll_marginal", "nll_prior", "nll_shuffled"):
        np.testing.assert_allclose(table[column], base, rtol=0, atol=INIT_TOL, err_msg=column)
    tokens = np.concatenate(table["token_z_information"].to_list())
    np.testing.assert_allclose(tokens, 0.0, atol=INIT_TOL)
    for key in ("gross_gain", "marginal_gain", "z_information", "prior_sample_gain"):
        assert abs(metrics[key]) <= INIT_TOL, key
    assert abs(metrics["z_reliance"]) <= INIT_TOL
    # The posterior encoder starts random, not at N(0, I): KL is its closed form against N(0, I)
    # and the net gain is minus the mean KL.
    _, batch = load_packed(params.paths.synthetic_dir, "test", _world(params))
    with torch.no_grad():
        mu, logvar = model.posterior(batch.encoder_input)
    closed_form = kl_divergence(mu, logvar, torch.zeros_like(mu), torch.zeros_like(logvar))
    np.testing.assert_allclose(
        table["kl"], closed_form.sum(1).double().numpy(), rtol=1e-5, atol=1e-9
    )
    assert metrics["kl"] > 0.0
    assert metrics["net_gain"] == pytest.approx(-metrics["kl"], abs=INIT_TOL)
    written = _eval_metrics(params, variant, seed)
    assert written[ENVIRONMENT_KEY]["device"] == "cpu"


def test_with_q_equal_to_the_standard_prior_kl_is_zero_and_m_is_b(tiny_pipeline, tmp_path):
    """q = p = N(0, I): every mixture weight is 1 and KL vanishes exactly."""
    params = _copy_pipeline(tiny_pipeline, tmp_path / "copy")
    variant, seed = RUNS[0]
    _untrained_checkpoint(params, variant, seed, zero_posterior=True)
    (metrics,) = evaluate.run(params, Group.screening(0, variant, seed), device="cpu", rates=[RATE])
    table = _eval_table(params, variant, seed)
    np.testing.assert_array_equal(table["kl"], 0.0)
    np.testing.assert_allclose(table["nll_marginal"], table["surprisal_sum"], atol=INIT_TOL)
    assert metrics["kl"] == 0.0
    assert abs(metrics["net_gain"]) <= INIT_TOL


@pytest.mark.parametrize("recorded", ["0" * 64, None])
def test_a_checkpoint_from_another_base_is_refused(tiny_pipeline, tmp_path, recorded):
    params = _copy_pipeline(tiny_pipeline, tmp_path / "copy")
    variant, seed = RUNS[0]
    model = CVAE(load_base(params.paths.base(0).base_model), params.cvae.common.model)
    extra = {"variant": variant, "seed": seed}
    if recorded is not None:
        extra["base_sha256"] = recorded
    checkpoint = Run(variant, RATE, seed, 0).checkpoint(params.paths.cvae_dir)
    save_cvae(checkpoint, model, extra=extra)
    with pytest.raises(ProvenanceError, match=str(checkpoint)):
        evaluate.run(params, Group.screening(0, variant, seed), device="cpu", rates=[RATE])


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


def test_evaluation_is_deterministic_for_a_fixed_seed_and_changes_with_another(tiny_runs):
    params = tiny_runs
    variant, seed = RUNS[0]
    model, _ = load_cvae(Run(variant, RATE, seed, 0).checkpoint(params.paths.cvae_dir))
    _, batch = load_packed(params.paths.synthetic_dir, "test", _world(params))
    settings = params.evaluate

    def scores(eval_seed: int):
        return evaluate_examples(
            model,
            batch,
            iw_samples=settings.iw_samples,
            batch_size=settings.batch_size,
            max_x_len=_world(params).max_x_len,
            device=CPU,
            seed=eval_seed,
        )

    first, second, other = scores(settings.seed), scores(settings.seed), scores(settings.seed + 1)
    for name in first._fields:
        np.testing.assert_array_equal(getattr(first, name), getattr(second, name), err_msg=name)
    # The seed is what fixes the samples: another seed draws other z and other scores.
    assert not np.array_equal(first.z_sample, other.z_sample)
    assert not np.array_equal(first.nll_marginal, other.nll_marginal)
    assert not np.array_equal(first.nll_shuffled, other.nll_shuffled)
    # The posterior moments do not depend on the sampling seed.
    np.testing.assert_array_equal(first.mu, other.mu)
    np.testing.assert_array_equal(first.kl, other.kl)
    # The stage's own output is what these scores give.
    if resolve_device(None) == CPU:
        table = _eval_table(params, variant, seed)
        for column in ("nll_post", "nll_marginal", "nll_prior", "nll_shuffled", "kl"):
            np.testing.assert_array_equal(table[column], getattr(first, column), err_msg=column)
