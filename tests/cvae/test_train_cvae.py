"""Facts about CVAE training (docs/method.md#the-cvae) and the `train_cvae` stage."""

from __future__ import annotations

import json
import math
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml
from conftest import REPO_ROOT, tiny_params_raw

from stages import train_cvae
from zgain.base.frozen import FrozenSurprisal, load_frozen
from zgain.base.model import load_base
from zgain.core.checkpoint import read_checkpoint
from zgain.core.environment import setup_torch
from zgain.core.errors import NonFiniteLossError, ParamsError
from zgain.core.nll import token_nll
from zgain.core.runs import Group, Run
from zgain.core.sequences import SeqBatch, minibatches, select, target_frame
from zgain.cvae.fit import fit_cvae
from zgain.cvae.gaussian import kl_divergence
from zgain.cvae.model import CVAE, KIND_CVAE, load_cvae
from zgain.cvae.objective import Objective
from zgain.cvae.terms import TERMS
from zgain.params import CommonCVAEParams, CVAEParams, Params, ResolvedVariant, parse_params
from zgain.world.packed import load_packed
from zgain.world.synthetic import World

LOGGED = ["total", "recon", "kl", "kl_fb", "beta", *(f"recon_{name}" for name in TERMS)]
"""Every loss name a run may log (it logs the recon_ terms its variant weights)."""


def logged_names(variant: ResolvedVariant) -> set[str]:
    """What a rate-targeted run of `variant` without BoW logs of its loss and controller."""
    terms = {f"recon_{name}" for name, weight in variant.weights.items() if weight > 0}
    return {"total", "recon", "kl", "kl_fb", "beta", "kl_target", "kl_ema", *terms}


CPU = torch.device("cpu")
ENTANGLED_TOL = 1e-5  # nats
LATENT_SCALES = (0.0, 1.0, 10.0, 1e3)  # z drawn as scale · N(0, I): includes very large z
TRAIN_STEPS = 40
WINDOW = 10  # logged steps averaged at the start and at the end of training
SMALL_LR = 3e-4
MONITOR_EXAMPLES = 64
SEED = 0
NAN_ROW = 5  # train example whose first token surprisal is set to NaN


def _default_variants() -> dict[str, ResolvedVariant]:
    """cvae.variants of the repository's params.yaml (each term alone, and added to R_mean)."""
    cvae = CVAEParams.model_validate(
        yaml.safe_load((REPO_ROOT / "params.yaml").read_text())["cvae"]
    )
    return {name: cvae.variant(name) for name in cvae.variants}


DEFAULT_VARIANTS = _default_variants()


def first_run(params: Params) -> tuple[str, float, int]:
    """(variant, rate, seed) of the first listed run."""
    return next(iter(params.cvae.variants)), params.cvae.rates[0], params.cvae.seeds[0]


def _copy_inputs(params: Params, dest: Path) -> Params:
    """The inputs of train_cvae copied under `dest` (no CVAE runs), with params for the copy."""
    root = Path(os.path.commonpath(list(params.paths.model_dump().values())))
    shutil.copytree(root, dest)
    copy = parse_params(tiny_params_raw(dest))
    for produced in (copy.paths.cvae_dir, copy.paths.cvae_live, copy.paths.eval_dir):
        shutil.rmtree(produced, ignore_errors=True)
    return copy


def _train_inputs(
    params: Params,
) -> tuple[SeqBatch, FrozenSurprisal, SeqBatch, torch.Tensor]:
    world = World.from_params(params.data).frames
    split, train = load_packed(params.paths.synthetic_dir, "train", world)
    val_split, val = load_packed(params.paths.synthetic_dir, "val", world)
    frozen = load_frozen(params.paths.base(0), split, world.n_targets)
    rows = slice(0, MONITOR_EXAMPLES)
    val_base = load_frozen(params.paths.base(0), val_split, world.n_targets).sequence_surprisal[
        rows
    ]
    return train, frozen, select(val, rows), torch.from_numpy(val_base)


def _fresh_cvae(params: Params, common: CommonCVAEParams, seed: int = SEED) -> CVAE:
    setup_torch(seed, device="cpu", threads=1)
    return CVAE(load_base(params.paths.base(0).base_model), common.model)


def _fit(
    params: Params,
    common: CommonCVAEParams,
    variant: ResolvedVariant,
    surprisal: torch.Tensor | None = None,
    rate: float = 1.0,
) -> tuple[CVAE, list[dict[str, float]]]:
    train, frozen, monitor, monitor_base = _train_inputs(params)
    model = _fresh_cvae(params, common)
    logged: list[dict[str, float]] = []
    fit_cvae(
        model,
        train,
        torch.from_numpy(frozen.surprisal) if surprisal is None else surprisal,
        monitor,
        monitor_base,
        Objective.on_split(
            common,
            variant,
            frozen.normalizer.mean_surprisal,
            rate,
            torch.from_numpy(frozen.surprisal),
            train.mask,
        ),
        seed=SEED,
        max_x_len=params.data.length_max,
        device=CPU,
        log=lambda step, values: logged.append({"step": step, **values}),
    )
    return model, logged


def _short_common(params: Params, **overrides: object) -> CommonCVAEParams:
    fields = {"steps": TRAIN_STEPS, "log_every": 1, "lr": SMALL_LR, "val_every": TRAIN_STEPS}
    fields |= overrides
    return params.cvae.common.model_copy(update=fields)


def test_the_default_variants_are_the_term_table_alone_and_added_to_the_plain_loss():
    """Seven replacement variants (one term each, λ = 1) and four additive ones: R_mean + R_x
    for x in ex, tok, cc, inv (docs/method.md#reconstruction-terms)."""
    weights = {name: dict(v.weights) for name, v in DEFAULT_VARIANTS.items()}
    alone = [ws for ws in weights.values() if len(ws) == 1]
    assert sorted(w for ws in alone for w in ws) == sorted(
        ["mean", "sum", "dist", "ex", "tok", "cc", "inv"]
    )
    added = {name: ws for name, ws in weights.items() if len(ws) > 1}
    assert added == {f"mean_{x}": {"mean": 1.0, x: 1.0} for x in ("ex", "tok", "cc", "inv")}
    assert all(set(ws.values()) == {1.0} for ws in weights.values())


def test_entangled_init_reproduces_the_base_surprisal_for_any_z(tiny_pipeline):
    params = tiny_pipeline
    train, frozen, _, _ = _train_inputs(params)
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


def test_the_weight_average_is_the_ema_of_the_iterates_and_leaves_training_alone(
    tiny_pipeline, monkeypatch
):
    """With weight_average d the saved weights are EMA_1 = w_1, EMA_t = d·EMA_{t−1} + (1−d)·w_t
    over the iterates w_t after each optimizer step; the iterates themselves, and so the
    training curve, are those of the run without the average."""
    from zgain.cvae import member

    decay, steps = 0.5, 5
    iterates: list[dict[str, torch.Tensor]] = []
    original = member.Member.step

    def recording(run) -> None:
        original(run)
        iterates.append({k: v.detach().clone() for k, v in run.model.named_parameters()})

    monkeypatch.setattr(member.Member, "step", recording)
    variant = DEFAULT_VARIANTS["token_mean"]
    plain, plain_log = _fit(tiny_pipeline, _short_common(tiny_pipeline, steps=steps), variant)
    plain_iterates, iterates[:] = list(iterates), []
    averaged_common = _short_common(tiny_pipeline, steps=steps, weight_average=decay)
    averaged, averaged_log = _fit(tiny_pipeline, averaged_common, variant)
    for before, after in zip(plain_iterates, iterates, strict=True):
        assert all(torch.equal(before[k], after[k]) for k in before)
    expected = dict(iterates[0])
    for weights in iterates[1:]:
        expected = {k: decay * expected[k] + (1 - decay) * weights[k] for k in expected}
    saved = dict(averaged.named_parameters())
    for name, value in expected.items():
        torch.testing.assert_close(saved[name], value, atol=1e-6, rtol=0, msg=name)
    last = dict(plain.named_parameters())
    assert any(not torch.equal(saved[k], last[k]) for k in last if last[k].requires_grad)
    assert [row["total"] for row in plain_log] == [row["total"] for row in averaged_log]


def test_a_nan_surprisal_stops_training_naming_the_step_and_a_term(tiny_pipeline):
    common = _short_common(tiny_pipeline)
    _, frozen, _, _ = _train_inputs(tiny_pipeline)
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
    assert any(f"'{term}'" in message for term in LOGGED)


def test_stage_writes_the_checkpoint_and_dvclive_metrics(tiny_pipeline, tmp_path):
    params = _copy_inputs(tiny_pipeline, tmp_path / "copy")
    variant, rate, seed = first_run(params)
    (last,) = train_cvae.run(params, Group.screening(0, variant, seed), rates=[rate])
    checkpoint = Run(variant, rate, seed, 0).checkpoint(params.paths.cvae_dir)
    group = Path(params.paths.cvae_dir) / "base0" / variant / f"seed{seed}"
    assert checkpoint == group / f"rate{rate!r}.pt"
    payload = read_checkpoint(checkpoint, KIND_CVAE)
    assert (payload["variant"], payload["seed"], payload["base"]) == (variant, seed, 0)
    assert payload["rate"] == payload["kl_target"] == rate
    world = World.from_params(params.data).frames
    frozen_sha = load_frozen(
        params.paths.base(0),
        load_packed(params.paths.synthetic_dir, "train", world)[0],
        world.n_targets,
    ).base_sha256
    assert payload["base_sha256"] == frozen_sha
    assert isinstance(load_cvae(checkpoint)[0], CVAE)
    assert not list(checkpoint.parent.glob("*.tmp"))

    metrics = json.loads(
        (Run(variant, rate, seed, 0).live_dir(params.paths.cvae_live) / "metrics.json").read_text()
    )
    expected = logged_names(params.cvae.variant(variant))
    assert expected <= set(metrics)
    assert not (set(LOGGED) - expected) & set(metrics)  # unweighted terms are not logged
    assert "bow" not in metrics
    assert metrics["step"] == params.cvae.common.steps
    assert metrics["environment"]["device"] == "cpu"
    assert metrics["environment"]["threads"] >= 1
    for term in expected:
        assert metrics[term] == pytest.approx(last[term])


def test_a_failed_stage_leaves_no_checkpoint_and_no_temp_file(tiny_pipeline, tmp_path, monkeypatch):
    params = _copy_inputs(tiny_pipeline, tmp_path / "copy")
    variant, rate, seed = first_run(params)

    def diverge(*args: object, **kwargs: object) -> dict[str, float]:
        raise NonFiniteLossError("step 3: loss term 'total' is nan; training stopped")

    monkeypatch.setattr(train_cvae, "fit_group", diverge)
    with pytest.raises(NonFiniteLossError):
        train_cvae.run(params, Group.screening(0, variant, seed), threads=1)
    checkpoint = Run(variant, rate, seed, 0).checkpoint(params.paths.cvae_dir)
    assert not checkpoint.exists()
    cvae_dir = Path(params.paths.cvae_dir)
    leftovers = [p for p in cvae_dir.rglob("*") if p.is_file()] if cvae_dir.exists() else []
    assert leftovers == []


def test_an_unknown_weight_name_stops_the_objective_naming_the_key(tiny_pipeline):
    variant = DEFAULT_VARIANTS["token_mean"].model_copy(update={"weights": {"mena": 1.0}})
    with pytest.raises(ParamsError) as err:
        Objective(tiny_pipeline.cvae.common, variant, 1.0, 1.0, 1.0)
    known = ", ".join(TERMS)
    assert err.value.lines == (
        f"cvae.variants.token_mean.weights.mena: unknown weight (known: {known}), got 'mena'",
    )


def test_the_run_records_the_device_and_threads_it_used(tiny_pipeline, tmp_path, monkeypatch):
    params = _copy_inputs(tiny_pipeline, tmp_path / "copy")
    variant, rate, seed = first_run(params)
    monkeypatch.setenv("ZGAIN_THREADS", "1")
    train_cvae.run(params, Group.screening(0, variant, seed), device="cpu", rates=[rate])
    metrics = json.loads(
        (Run(variant, rate, seed, 0).live_dir(params.paths.cvae_live) / "metrics.json").read_text()
    )
    assert metrics["environment"]["threads"] == 1
    assert metrics["environment"]["device"] == "cpu"
    assert metrics["environment"]["dtype"] == "float32"
    assert metrics["environment"]["torch_version"] == torch.__version__


def test_the_decoder_learns_at_its_own_rate_and_both_rates_decay(tiny_pipeline):
    from zgain.cvae.member import param_groups

    common = _short_common(tiny_pipeline, decoder_lr=1e-5, lr_warmup_steps=2, min_lr_ratio=0.1)
    model = _fresh_cvae(tiny_pipeline, common)
    groups = param_groups(model, common.lr, common.decoder_lr)
    decoder_ids = {id(p) for p in model.decoder.parameters()}
    assert [g["peak_lr"] for g in groups] == [common.lr, 1e-5]
    assert {id(p) for p in groups[1]["params"]} == decoder_ids
    assert not decoder_ids & {id(p) for p in groups[0]["params"]}
    _, logged = _fit(tiny_pipeline, common, DEFAULT_VARIANTS["token_sum"])
    lrs = [entry["lr"] for entry in logged]
    assert lrs[0] == pytest.approx(common.lr / 2)  # step 1 of a 2-step warm-up
    assert max(lrs) == pytest.approx(common.lr, rel=1e-6)
    # the last step (index 39) is 37/38 of the way down the cosine to min_lr_ratio · lr
    cosine = 0.5 * (1 + math.cos(math.pi * 37 / 38))
    assert lrs[-1] == pytest.approx(common.lr * (0.1 + 0.9 * cosine), rel=1e-9)


def test_a_frozen_decoder_gets_no_optimizer_group(tiny_pipeline):
    from zgain.cvae.member import param_groups

    common = tiny_pipeline.cvae.common
    frozen_model = common.model.model_copy(update={"freeze_decoder": "all"})
    model = CVAE(load_base(tiny_pipeline.paths.base(0).base_model), frozen_model)
    groups = param_groups(model, common.lr, common.decoder_lr)
    assert len(groups) == 1 and groups[0]["peak_lr"] == common.lr


def test_validation_decomposition_is_logged_and_consistent(tiny_pipeline):
    common = _short_common(tiny_pipeline, steps=6, log_every=3, val_every=3)
    _, logged = _fit(tiny_pipeline, common, DEFAULT_VARIANTS["token_sum"])
    for entry in logged:
        gross = entry["val_marginal_gain"] + entry["val_z_information"]
        assert entry["val_gross_gain"] == pytest.approx(gross, abs=1e-9)
        assert entry["val_kl"] >= 0


RATE_TARGET = 0.25  # nats per example, below the tiny world's I* ≈ 0.74
RATE_STEPS = 1000


def _train_kl(model: CVAE, train: SeqBatch) -> float:
    """Mean KL(q(z|x,y) ‖ p(z|x)) over the whole train split (what the controller targets)."""
    with torch.no_grad():
        mu_q, logvar_q = model.posterior(train.encoder_input)
        mu_p, logvar_p = model.prior(train.prior_input)
        return kl_divergence(mu_q, logvar_q, mu_p, logvar_p).sum(dim=1).mean().item()


def test_rate_targeting_brings_differently_scaled_variants_to_the_same_kl(tiny_pipeline):
    """token_mean, token_sum and dist_normalized differ in raw scale by ~T and ~1/N; under the
    rate_target controller each ends within 15% of the target KL on its training split. (The
    tiny world's 400 training examples make the batch KL
    noisy: batches of 128 and 1,000 steps let the dual ascent settle. The encoders read tokens
    only: on so few examples a base-reading encoder's batch KL swings by ±60% and 1,000 steps
    do not settle it; the default world's runs are checked in reports/tables/rate_check.csv.
    Over fit seeds 0-5, 17 of these 18 runs ended within 12.1% of the target, the farthest
    token_sum at seed 0, the seed used here; dist_normalized at seed 4 had not settled, at
    about 6× the target: the tolerance holds for this seed, not for every seed.)"""
    common = _short_common(
        tiny_pipeline,
        steps=RATE_STEPS,
        log_every=RATE_STEPS,
        val_every=RATE_STEPS,
        lr=3e-3,
        decoder_lr=1e-4,
        batch_size=128,
        beta_schedule="rate_target",
        model=tiny_pipeline.cvae.common.model.model_copy(update={"encoders_read_base": False}),
        # β ramps over 50 steps to a start of 0.2 (each variant's β below), then adapts by the
        # difference rule the tolerance above was measured with (under log_ratio, whose step at
        # this C = 0.25 is four times as large near the target, token_mean ended 23% low here)
        rate_target=tiny_pipeline.cvae.common.rate_target.model_copy(
            update={"warmup_steps": 50, "rule": "difference"}
        ),
    )
    train = _train_inputs(tiny_pipeline)[0]
    achieved, betas = {}, {}
    for name in ("token_mean", "token_sum", "dist_normalized"):
        variant = DEFAULT_VARIANTS[name].model_copy(update={"beta": 0.2})
        model, logged = _fit(tiny_pipeline, common, variant, rate=RATE_TARGET)
        assert logged[-1]["kl_target"] == RATE_TARGET
        achieved[name] = _train_kl(model.eval(), train)
        betas[name] = logged[-1]["beta"]
    for name, kl in achieved.items():
        assert kl == pytest.approx(RATE_TARGET, rel=0.15), (name, achieved, betas)
    # the reconstruction is divided by its value on the frozen base (scale-free control), so β
    # meets every variant at one scale: the twins settle at one β, token_sum within 2× of it
    assert betas["dist_normalized"] == pytest.approx(betas["token_mean"], rel=1e-6), betas
    assert max(betas.values()) < 2 * min(betas.values()), betas


@pytest.mark.parametrize("stage", ["train", "evaluate"])
def test_a_seed_that_is_not_listed_is_named_as_such(tiny_pipeline, stage):
    from stages import evaluate

    module = train_cvae if stage == "train" else evaluate
    variant = next(iter(tiny_pipeline.cvae.variants))
    with pytest.raises(ParamsError) as err:
        module.run(tiny_pipeline, Group.screening(0, variant, 7))
    assert err.value.lines == ("cvae.seeds: no seed 7 (listed: 0, 1)",)
