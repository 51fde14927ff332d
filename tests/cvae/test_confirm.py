"""A confirming group end to end on the tiny profile's second base: base 1 gets its own
train_base, surprisal and normalizer files; `confirm_train_cvae@1-0` trains every contested
variant at the confirming rates on it, and `confirm_evaluate@1-0` scores them, each run in
`base1/confirm-seed0/<variant>/` (docs/architecture.md#runs-and-groups)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from conftest import tiny_params_raw

from stages import evaluate, normalizer, surprisal, train_base, train_cvae
from zgain.core.checkpoint import read_checkpoint
from zgain.core.errors import ParamsError, ProvenanceError
from zgain.core.group_stage import resolve_group
from zgain.core.io import sha256_file
from zgain.core.runs import Group, Run, Tier
from zgain.cvae.model import KIND_CVAE, load_cvae, save_cvae
from zgain.params import Params, parse_params
from zgain.results.curves import curve_path, read_curve

BASE, SEED = 1, 0  # the tiny profile: base.seeds [0, 1], cvae.confirm.seeds [0]


@pytest.fixture(scope="module")
def confirmed(tiny_pipeline, tmp_path_factory) -> tuple[Params, list, list]:
    """Base 1's stages, then its confirming group trained and evaluated, in a copy of the
    tiny pipeline (base 0 only) without its CVAE runs."""
    root = Path(os.path.commonpath(list(tiny_pipeline.paths.model_dump().values())))
    dest = tmp_path_factory.mktemp("confirm") / "copy"
    shutil.copytree(root, dest)
    params = parse_params(tiny_params_raw(dest))
    for produced in (params.paths.cvae_dir, params.paths.cvae_live, params.paths.eval_dir):
        shutil.rmtree(produced, ignore_errors=True)
    train_base.run(params, BASE, device="cpu", threads=1)
    surprisal.run(params, BASE, device="cpu", threads=1)
    normalizer.run(params, BASE)
    lasts = train_cvae.run(params, Group.confirming_of(BASE, SEED), device="cpu", threads=1)
    metrics = evaluate.run(params, Group.confirming_of(BASE, SEED), device="cpu", threads=1)
    return params, lasts, metrics


def _runs(params: Params) -> list[Run]:
    confirm = params.cvae.confirm
    return [
        Run(variant, rate, SEED, BASE, Tier.CONFIRMING)
        for variant in confirm.variants
        for rate in confirm.rates
    ]


def test_each_base_has_its_own_upstream_files(confirmed) -> None:
    params, _, _ = confirmed
    zero, one = params.paths.base(0), params.paths.base(BASE)
    for key in ("base_model", "base_meta", "normalizer"):
        assert Path(getattr(one, key)).is_file(), key
    for name in ("tokens.parquet", "examples.parquet"):
        assert (Path(one.surprisal_dir) / name).is_file()
    assert sha256_file(one.base_model) != sha256_file(zero.base_model)
    normalizers = [json.loads(Path(p.normalizer).read_text()) for p in (zero, one)]
    assert normalizers[0]["base_sha256"] == sha256_file(zero.base_model)
    assert normalizers[1]["base_sha256"] == sha256_file(one.base_model)


def test_the_confirming_group_trains_every_variant_at_its_rates(confirmed) -> None:
    params, lasts, metrics = confirmed
    runs = _runs(params)
    assert len(runs) == len(lasts) == len(metrics) == 2  # two variants at one rate
    base_sha = sha256_file(params.paths.base(BASE).base_model)
    for run, last in zip(runs, lasts, strict=True):
        where = Path("base1") / "confirm-seed0" / run.variant
        checkpoint = run.checkpoint(params.paths.cvae_dir)
        assert checkpoint == Path(params.paths.cvae_dir) / where / f"rate{run.rate!r}.pt"
        payload = read_checkpoint(checkpoint, KIND_CVAE)
        assert (payload["variant"], payload["seed"], payload["base"]) == (run.variant, SEED, BASE)
        assert payload["base_sha256"] == base_sha
        assert last["kl_target"] == run.rate
        live = run.live_dir(params.paths.cvae_live)
        assert live == Path(params.paths.cvae_live) / where / f"rate{run.rate!r}"
        assert (live / "metrics.json").is_file()


def test_a_confirming_run_trains_cvae_confirm_steps(confirmed) -> None:
    """cvae.confirm.steps (40 in the tiny profile) sets a confirming run's length and every
    schedule spans it; a screening run keeps cvae.common.steps (30)."""
    params = confirmed[0]
    steps, common = params.cvae.confirm.steps, params.cvae.common.steps
    assert steps is not None and steps != common
    for run in _runs(params):
        curve = read_curve(curve_path(params.paths.cvae_live, run, "beta"), "beta")
        assert curve.index.max() == steps
    tier = params.cvae.tier_common(confirming=True)
    assert (tier.steps, params.cvae.tier_common(confirming=False).steps) == (steps, common)


def test_the_confirming_group_is_evaluated_run_by_run(confirmed) -> None:
    params, _, metrics = confirmed
    for run, values in zip(_runs(params), metrics, strict=True):
        folder = run.eval_dir(params.paths.eval_dir)
        assert folder == Path(params.paths.eval_dir) / "base1/confirm-seed0" / run.variant / (
            f"rate{run.rate!r}"
        )
        written = json.loads((folder / "metrics.json").read_text())
        assert written["kl"] == pytest.approx(values["kl"])
        assert (folder / "examples.parquet").is_file()
    # the screening base's groups were not touched
    assert not (Path(params.paths.cvae_dir) / "base0").exists()


def test_a_checkpoint_of_the_other_base_is_refused_naming_the_confirming_stage(
    confirmed, tmp_path
) -> None:
    params, _, _ = confirmed
    run = _runs(params)[0]
    model, _ = load_cvae(run.checkpoint(params.paths.cvae_dir))
    stale = run.checkpoint(tmp_path)
    save_cvae(
        stale,
        model,
        extra={
            "variant": run.variant,
            "seed": SEED,
            "base_sha256": sha256_file(params.paths.base(0).base_model),
        },
    )
    raw = tiny_params_raw()
    raw["paths"] = {**params.paths.model_dump(), "cvae_dir": str(tmp_path)}
    other = parse_params(raw)
    with pytest.raises(ProvenanceError, match=r"dvc repro confirm_train_cvae@1-0"):
        evaluate.run(
            other, Group.confirming_of(BASE, SEED), device="cpu", threads=1, rates=[run.rate]
        )


@pytest.mark.parametrize(
    ("base", "variant", "seed", "named"),
    [
        (0, None, SEED, r"^cvae\.confirm\.bases: no base 0 \(listed: 1\)$"),
        (BASE, "token_mean", SEED, r"^--base 1: screening groups train on base 0 only$"),
        (BASE, None, 1, r"^cvae\.confirm\.seeds: no seed 1 \(listed: 0\)$"),
    ],
)
def test_a_group_of_the_wrong_tier_is_refused(tiny_pipeline, base, variant, seed, named) -> None:
    with pytest.raises(ParamsError, match=named):
        resolve_group(tiny_pipeline, base, variant, seed)  # the command line's check
    # and the stage's own, for a group built without it
    tier = Group.confirming_of(base, seed) if variant is None else None
    with pytest.raises(ParamsError, match=named):
        group = tier or Group.screening(base, variant, seed)
        train_cvae.run(tiny_pipeline, group, device="cpu", threads=1)
