"""Facts about CVAE training (SPEC §4, §5) and the `train_cvae` stage."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml
from conftest import REPO_ROOT, tiny_params_raw

from stages import train_cvae
from zgain.config import load_dataclass
from zgain.fit_cvae import Objective, fit_cvae
from zgain.frozen import FrozenSurprisal, load_frozen
from zgain.io import run_dir
from zgain.models import CVAE, KIND_CVAE, load_base, load_cvae, read_checkpoint
from zgain.objectives import LossTerms, token_nll
from zgain.params import CommonCVAEParams, Params, VariantParams, parse_params
from zgain.runtime import cvae_config, load_packed
from zgain.sequences import SeqBatch, target_frame
from zgain.training import NonFiniteLossError, configure_torch, minibatches, select

CPU = torch.device("cpu")
ENTANGLED_TOL = 1e-5  # nats
LATENT_SCALES = (0.0, 1.0, 10.0, 1e3)  # z drawn as scale · N(0, I): includes very large z
TRAIN_STEPS = 40
WINDOW = 10  # logged steps averaged at the start and at the end of training
SMALL_LR = 3e-4
MONITOR_EXAMPLES = 64
SEED = 0
NAN_ROW = 5  # train example whose first token surprisal is set to NaN


def _default_variants() -> dict[str, VariantParams]:
    """cvae.variants of the repository's params.yaml: one per row of SPEC §4."""
    raw = yaml.safe_load((REPO_ROOT / "params.yaml").read_text())["cvae"]["variants"]
    return {
        name: load_dataclass(VariantParams, value, f"cvae.variants.{name}")
        for name, value in raw.items()
    }


DEFAULT_VARIANTS = _default_variants()


def _copy_inputs(params: Params, dest: Path) -> Params:
    """The inputs of train_cvae copied under `dest` (no CVAE runs), with params for the copy."""
    root = Path(os.path.commonpath(list(asdict(params.paths).values())))
    shutil.copytree(root, dest)
    copy = parse_params(tiny_params_raw(dest))
    for produced in (copy.paths.cvae_dir, copy.paths.cvae_live, copy.paths.eval_dir):
        shutil.rmtree(produced, ignore_errors=True)
    return copy


def _train_inputs(params: Params) -> tuple[SeqBatch, FrozenSurprisal, SeqBatch]:
    world = params.data.world()
    split, train = load_packed(params.paths.synthetic_dir, "train", world)
    _, val = load_packed(params.paths.synthetic_dir, "val", world)
    frozen = load_frozen(params.paths, split, world.max_y_len + 1)
    return train, frozen, select(val, slice(0, MONITOR_EXAMPLES))


def _fresh_cvae(params: Params, common: CommonCVAEParams, seed: int = SEED) -> CVAE:
    configure_torch(common.threads, seed)
    return CVAE(load_base(params.paths.base_model), cvae_config(common))


def _fit(
    params: Params,
    common: CommonCVAEParams,
    variant: VariantParams,
    surprisal: torch.Tensor | None = None,
) -> tuple[CVAE, list[dict[str, float]]]:
    train, frozen, monitor = _train_inputs(params)
    model = _fresh_cvae(params, common)
    logged: list[dict[str, float]] = []
    fit_cvae(
        model,
        train,
        torch.from_numpy(frozen.surprisal) if surprisal is None else surprisal,
        monitor,
        Objective(common, variant, frozen.normalizer.mean_surprisal),
        seed=SEED,
        max_x_len=params.data.length_max,
        device=CPU,
        log=lambda step, values: logged.append({"step": step, **values}),
    )
    return model, logged


def _short_common(params: Params, **overrides: object) -> CommonCVAEParams:
    fields = {"steps": TRAIN_STEPS, "log_every": 1, "lr": SMALL_LR, "device": "cpu"} | overrides
    return dataclasses.replace(params.cvae.common, **fields)


def test_the_default_variants_are_the_seven_rows_of_spec_4():
    weights = {name: dict(v.weights) for name, v in DEFAULT_VARIANTS.items()}
    assert sorted(w for ws in weights.values() for w in ws) == sorted(
        ["mean", "sum", "dist", "ex", "tok", "cc", "inv"]
    )
    assert all(list(ws.values()) == [1.0] for ws in weights.values())


def test_entangled_init_reproduces_the_base_surprisal_for_any_z(tiny_pipeline):
    params = tiny_pipeline
    train, frozen, _ = _train_inputs(params)
    model = _fresh_cvae(params, params.cvae.common).eval()
    rows = slice(0, 128)
    part = select(train, rows)
    stored = torch.from_numpy(frozen.surprisal[rows]).double()
    generator = torch.Generator().manual_seed(SEED)
    for scale in LATENT_SCALES:
        z = scale * torch.randn(part.targets.shape[0], model.cfg.latent_dim, generator=generator)
        with torch.no_grad():
            logits = target_frame(model.decode(part.decoder_input, z), params.data.length_max)
        nll = token_nll(logits.double(), part.targets, part.mask)
        assert torch.equal(part.mask, torch.from_numpy(frozen.mask[rows]))
        assert (nll - stored).abs().max().item() <= ENTANGLED_TOL, f"z scale {scale}"


@pytest.mark.parametrize("name", list(DEFAULT_VARIANTS))
def test_training_lowers_the_loss_of_every_default_variant(tiny_pipeline, name):
    """The mean `total` of the last logged steps is below that of the first ones.

    β is held constant: under a warm-up schedule `total` is not one fixed objective (β·KL grows
    with the step by construction), whereas with constant β it is the very quantity Adam descends.
    """
    common = _short_common(tiny_pipeline, beta_schedule="constant")
    _, logged = _fit(tiny_pipeline, common, DEFAULT_VARIANTS[name])
    assert [entry["step"] for entry in logged] == list(range(1, TRAIN_STEPS + 1))
    totals = np.array([entry["total"] for entry in logged])
    assert totals[-WINDOW:].mean() < totals[:WINDOW].mean()


def test_training_is_deterministic_for_a_fixed_seed(tiny_pipeline):
    common = _short_common(tiny_pipeline, steps=8, log_every=4)
    variant = DEFAULT_VARIANTS["token_share_cc"]
    first, first_log = _fit(tiny_pipeline, common, variant)
    second, second_log = _fit(tiny_pipeline, common, variant)
    assert first_log == second_log
    first_state, second_state = first.state_dict(), second.state_dict()
    assert first_state.keys() == second_state.keys()
    for key, value in first_state.items():
        assert torch.equal(value, second_state[key]), key
    # Training moved the z-injection away from its zero init, so the equality is not vacuous.
    assert first.z_injection.weight.abs().max().item() > 0


def test_a_nan_surprisal_stops_training_naming_the_step_and_a_term(tiny_pipeline):
    common = _short_common(tiny_pipeline)
    _, frozen, _ = _train_inputs(tiny_pipeline)
    surprisal = torch.from_numpy(frozen.surprisal.copy())
    surprisal[NAN_ROW, 0] = float("nan")
    # The first step whose minibatch holds the poisoned row is the one that must be named.
    batches = minibatches(
        surprisal.shape[0], common.batch_size, torch.Generator().manual_seed(SEED)
    )
    bad_step = next(step for step, index in enumerate(batches) if NAN_ROW in index.tolist())
    assert bad_step < common.steps
    with pytest.raises(NonFiniteLossError) as err:
        _fit(tiny_pipeline, common, DEFAULT_VARIANTS["token_share_cc"], surprisal=surprisal)
    message = str(err.value)
    assert f"step {bad_step}:" in message
    assert any(f"'{term}'" in message for term in LossTerms._fields)


def test_stage_writes_the_checkpoint_and_dvclive_metrics(tiny_pipeline, tmp_path):
    params = _copy_inputs(tiny_pipeline, tmp_path / "copy")
    variant, seed = next(iter(params.cvae.variants)), params.cvae.seeds[0]
    last = train_cvae.run(params, variant, seed)
    checkpoint = run_dir(params.paths.cvae_dir, variant, seed).with_suffix(".pt")
    assert checkpoint == Path(params.paths.cvae_dir) / variant / f"seed{seed}.pt"
    payload = read_checkpoint(checkpoint, KIND_CVAE)
    assert payload["variant"] == variant
    assert payload["seed"] == seed
    frozen_sha = load_frozen(
        params.paths,
        load_packed(params.paths.synthetic_dir, "train", params.data.world())[0],
        params.data.world().max_y_len + 1,
    ).base_sha256
    assert payload["base_sha256"] == frozen_sha
    assert isinstance(load_cvae(checkpoint), CVAE)
    assert not list(checkpoint.parent.glob("*.tmp"))

    metrics = json.loads(
        (run_dir(params.paths.cvae_live, variant, seed) / "metrics.json").read_text()
    )
    assert set(LossTerms._fields) <= set(metrics)
    assert metrics["step"] == params.cvae.common.steps
    for term in LossTerms._fields:
        assert metrics[term] == pytest.approx(last[term])


def test_a_failed_stage_leaves_no_checkpoint_and_no_temp_file(tiny_pipeline, tmp_path, monkeypatch):
    params = _copy_inputs(tiny_pipeline, tmp_path / "copy")
    variant, seed = next(iter(params.cvae.variants)), params.cvae.seeds[0]

    def diverge(*args: object, **kwargs: object) -> dict[str, float]:
        raise NonFiniteLossError("step 3: loss term 'total' is nan; training stopped")

    monkeypatch.setattr(train_cvae, "fit_cvae", diverge)
    with pytest.raises(NonFiniteLossError):
        train_cvae.run(params, variant, seed)
    checkpoint = run_dir(params.paths.cvae_dir, variant, seed).with_suffix(".pt")
    assert not checkpoint.exists()
    cvae_dir = Path(params.paths.cvae_dir)
    leftovers = [p for p in cvae_dir.rglob("*") if p.is_file()] if cvae_dir.exists() else []
    assert leftovers == []
