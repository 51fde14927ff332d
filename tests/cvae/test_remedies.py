"""The remedies a variant can add over its weighting (docs/method.md#remedies): free bits, a
bag-of-words loss, aggressive encoder training and embedding-only z injection, each a
per-variant override of cvae.common."""

from __future__ import annotations

import json
import math

import pytest
import torch
from conftest import MODEL_MAX_X, make_small_base, random_batch, tiny_params_raw, upstream_copy

from stages import evaluate, train_cvae
from zgain.core.checkpoint import read_checkpoint
from zgain.core.errors import ParamsError
from zgain.core.runs import Group, Run
from zgain.cvae.member import Member, ReaderFeatures, batch_loss
from zgain.cvae.model import CVAE, KIND_CVAE
from zgain.cvae.objective import Objective
from zgain.params import CVAEConfig, parse_params

REMEDIES = {
    "fb": {"weights": {"mean": 1.0}, "free_bits": 0.25},
    "bow": {"weights": {"mean": 1.0}, "bow_weight": 0.5},
    "aggressive": {"weights": {"mean": 1.0}, "aggressive": {"encoder_steps": 3, "until": 2}},
    "embedding": {"weights": {"mean": 1.0}, "z_memory": False},
}


def _params(**variants: dict):
    raw = tiny_params_raw()
    raw["cvae"]["variants"] |= variants
    return parse_params(raw)


def test_each_remedy_overrides_only_its_own_setting() -> None:
    params = _params(**REMEDIES)
    common = params.cvae.common
    plain = params.cvae.variant("token_mean")
    assert (plain.free_bits, plain.bow_weight, plain.aggressive) == (
        common.free_bits,
        common.bow_weight,
        None,
    )
    assert plain.model == common.model and common.model.z_memory
    assert params.cvae.variant("fb").free_bits == 0.25
    assert params.cvae.variant("bow").bow_weight == 0.5
    aggressive = params.cvae.variant("aggressive").aggressive
    assert aggressive is not None and (aggressive.encoder_steps, aggressive.until) == (3, 2)
    embedding = params.cvae.variant("embedding").model
    assert not embedding.z_memory
    assert embedding.model_dump() == common.model.model_dump() | {"z_memory": False}


def test_an_aggressive_phase_longer_than_training_is_refused_by_name() -> None:
    raw = tiny_params_raw()
    steps = raw["cvae"]["common"]["steps"]
    raw["cvae"]["variants"]["long"] = {
        "weights": {"mean": 1.0},
        "aggressive": {"encoder_steps": 1, "until": steps + 1},
    }
    with pytest.raises(ParamsError, match=r"variants\.long\.aggressive\.until: must be <= "):
        parse_params(raw)


def test_embedding_only_injection_builds_no_memory_slot() -> None:
    config = _params(**REMEDIES).cvae.variant("embedding").model
    small = CVAEConfig(**(config.model_dump() | {"encoder_d_model": 8, "encoder_heads": 2}))
    model = CVAE(make_small_base(0), small)
    assert model.z_memory is None and model.memory(torch.zeros(2, small.latent_dim)) is None


def _member(variant: str, seed: int = 0) -> tuple[Member, Objective]:
    params = _params(**REMEDIES)
    resolved = params.cvae.variant(variant)
    config = resolved.model.model_dump() | {"encoder_d_model": 8, "encoder_heads": 2}
    torch.manual_seed(seed)
    model = CVAE(make_small_base(seed), CVAEConfig(**config))
    objective = Objective(params.cvae.common, resolved, normalizer=2.0, rate=1.0, scale=1.0)
    return Member(model, objective, lambda step, values: None, seed, torch.device("cpu")), objective


def _surprisal(part) -> torch.Tensor:
    return torch.rand(part.targets.shape, generator=torch.Generator().manual_seed(3)) + 0.1


def test_an_encoder_step_moves_the_posterior_encoder_and_nothing_else() -> None:
    member, _ = _member("aggressive")
    part = random_batch(seed=1, batch_size=8)
    before = {k: v.detach().clone() for k, v in member.model.named_parameters()}
    features = ReaderFeatures.of(member.model, part)
    member.encoder_step(0, part, _surprisal(part), 0.5, MODEL_MAX_X, features)
    moved = {
        name
        for name, param in member.model.named_parameters()
        if not torch.equal(param.detach(), before[name])
    }
    encoder = {
        f"posterior_encoder.{n}" for n, _ in member.model.posterior_encoder.named_parameters()
    }
    assert moved and moved <= encoder
    # Adam keeps moments only for what it stepped: the rest start fresh at the joint update
    encoder_ids = {id(p) for p in member.model.posterior_encoder.parameters()}
    assert {id(p) for p in member.optimizer.state} <= encoder_ids


def test_the_bag_of_words_term_enters_the_loss_with_the_variants_weight() -> None:
    part = random_batch(seed=2, batch_size=8)
    surprisal = _surprisal(part)
    totals = {}
    for variant in ("token_mean", "bow"):
        member, objective = _member(variant)
        generator = torch.Generator().manual_seed(5)
        terms, _ = batch_loss(
            member.model,
            part,
            surprisal,
            objective,
            0.5,
            max_x_len=MODEL_MAX_X,
            generator=generator,
        )
        totals[variant] = terms
    plain, bow = totals["token_mean"], totals["bow"]
    assert plain.bow is None and bow.bow is not None and float(bow.bow.detach()) > 0
    torch.testing.assert_close(plain.recon, bow.recon, rtol=0, atol=0)
    torch.testing.assert_close(bow.total, plain.total + 0.5 * bow.bow, rtol=0, atol=1e-6)


STAGE_REMEDIES = {
    "aggressive": {"weights": {"mean": 1.0}, "aggressive": {"encoder_steps": 2, "until": 10}},
    "embedding_only": {"weights": {"mean": 1.0}, "z_memory": False},
}


def test_remedy_runs_train_evaluate_and_keep_the_group_invariant(tiny_pipeline, tmp_path):
    """Through the stages: an aggressive run trained beside another rate equals the same run
    trained alone (its extra encoder updates draw on its own noise and RNG stream), and the
    embedding-only run's checkpoint has no memory slot and evaluates."""
    rates = [0.5, 1.0]
    grouped = upstream_copy(tiny_pipeline, tmp_path / "group", rates, STAGE_REMEDIES)
    alone = upstream_copy(tiny_pipeline, tmp_path / "alone", rates, STAGE_REMEDIES)
    train_cvae.run(grouped, Group.screening(0, "aggressive", 0), device="cpu", threads=1)
    train_cvae.run(alone, Group.screening(0, "aggressive", 0), device="cpu", threads=1, rates=[1.0])
    run = Run("aggressive", 1.0, 0, 0)
    group_state, alone_state = (
        read_checkpoint(run.checkpoint(p.paths.cvae_dir), KIND_CVAE)["state_dict"]
        for p in (grouped, alone)
    )
    for name, tensor in group_state.items():
        torch.testing.assert_close(tensor, alone_state[name], atol=1e-6, rtol=0, msg=name)
    train_cvae.run(
        grouped, Group.screening(0, "embedding_only", 0), device="cpu", threads=1, rates=[1.0]
    )
    evaluate.run(
        grouped, Group.screening(0, "embedding_only", 0), device="cpu", threads=1, rates=[1.0]
    )
    embedding = Run("embedding_only", 1.0, 0, 0)
    state = read_checkpoint(embedding.checkpoint(grouped.paths.cvae_dir), KIND_CVAE)["state_dict"]
    assert "z_injection.weight" in state
    assert not any(key.startswith(("z_memory.", "memory_gate")) for key in state)
    metrics = json.loads((embedding.eval_dir(grouped.paths.eval_dir) / "metrics.json").read_text())
    assert math.isfinite(metrics["kl"]) and metrics["kl"] > 0
