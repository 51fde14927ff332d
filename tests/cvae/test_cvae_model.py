"""Facts about the CVAE: entangled init, freezing, priors, posterior, checkpoints.

See docs/method.md#the-cvae. The base LM it is built on is tested in tests/base/test_models.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from conftest import (
    MODEL_MAX_X,
    MODEL_MAX_Y,
    MODEL_SEQ_LEN,
    MODEL_VOCAB,
    make_small_base,
    random_batch,
)
from torch import Tensor

from zgain.base.model import BaseLM, Memory, save_base
from zgain.core.checkpoint import read_checkpoint
from zgain.core.errors import DataError
from zgain.core.sequences import target_frame
from zgain.cvae.gaussian import LOGVAR_MAX, LOGVAR_MIN, reparameterize
from zgain.cvae.model import (
    CVAE,
    KIND_CVAE,
    load_cvae,
    save_cvae,
)
from zgain.params import CVAEConfig

VOCAB, MAX_X, MAX_Y, SEQ_LEN = MODEL_VOCAB, MODEL_MAX_X, MODEL_MAX_Y, MODEL_SEQ_LEN
LATENT = 3
EXACT = 1e-6


def _cvae_config(**overrides: object) -> CVAEConfig:
    fields = {
        "latent_dim": LATENT,
        "encoder_layers": 1,
        "encoder_d_model": 8,
        "encoder_heads": 2,
        "prior": "standard",
        "freeze_decoder": "none",
        "encoders_read_base": False,
        "z_memory": False,
    } | overrides
    return CVAEConfig(**fields)  # type: ignore[arg-type]


def _make_cvae(seed: int = 0, **overrides: object) -> tuple[BaseLM, CVAE]:
    base = make_small_base(seed)
    return base, CVAE(base, _cvae_config(**overrides))


def _elbo_loss(model: CVAE, seed: int = 2) -> torch.Tensor:
    """Token-mean NLL with z from the posterior plus KL to the prior: a loss that needs z."""
    batch = random_batch()
    mu, logvar = model.posterior(batch.encoder_input)
    prior_mu, prior_logvar = model.prior(batch.prior_input)
    z = reparameterize(mu, logvar, torch.Generator().manual_seed(seed))
    logits = target_frame(model.decode(batch.decoder_input, z), MAX_X)  # (B, T, V)
    nll = F.cross_entropy(logits.transpose(1, 2), batch.targets, reduction="none")  # (B, T)
    recon = (nll * batch.mask).sum() / batch.mask.sum()
    kl = 0.5 * (
        prior_logvar - logvar + (logvar.exp() + (mu - prior_mu) ** 2) / prior_logvar.exp() - 1
    )
    return recon + kl.sum(dim=1).mean()


def _state(module: torch.nn.Module) -> dict[str, torch.Tensor]:
    return {k: v.detach().clone() for k, v in module.state_dict().items()}


def test_configs_reject_invalid_values() -> None:
    with pytest.raises(ValueError, match="prior"):
        _cvae_config(prior="flow")
    with pytest.raises(ValueError, match="latent_dim"):
        _cvae_config(latent_dim=0)
    with pytest.raises(ValueError, match="encoder_heads"):
        _cvae_config(encoder_d_model=8, encoder_heads=3)


@pytest.mark.parametrize(("reads_base", "z_memory"), [(False, False), (True, False), (True, True)])
def test_entangled_init_reproduces_base_logits_for_every_z(reads_base, z_memory) -> None:
    base, model = _make_cvae(encoders_read_base=reads_base, z_memory=z_memory)
    model.eval()
    tokens = random_batch().decoder_input
    reference = base(tokens)
    for seed in range(4):
        z = torch.randn(tokens.shape[0], LATENT, generator=torch.Generator().manual_seed(seed))
        assert (model.decode(tokens, 10.0 * z) - reference).abs().max() <= EXACT


def test_one_step_trains_the_injection_and_leaves_the_base_untouched() -> None:
    base = make_small_base()
    base_before = _state(base)
    model = CVAE(base, _cvae_config())
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    _elbo_loss(model).backward()
    optimizer.step()
    assert model.z_injection.weight.abs().max() > 0
    assert all(torch.equal(v, base_before[k]) for k, v in base.state_dict().items())
    decoder_moved = any(
        not torch.equal(v, base_before[k]) for k, v in model.decoder.state_dict().items()
    )
    assert decoder_moved


def test_z_memory_starts_closed_and_its_gate_learns_first() -> None:
    """The memory slots reach the logits only through tanh(gate): at step 0 the gate gets a
    gradient and the slot weights none; once a gate is open, z moves the logits."""
    base, model = _make_cvae(z_memory=True)
    assert model.memory_gate is not None and model.z_memory is not None
    _elbo_loss(model).backward()
    assert model.memory_gate.grad is not None and model.memory_gate.grad.abs().max() > 0
    assert model.z_memory.weight.grad is not None
    assert model.z_memory.weight.grad.abs().max() == 0
    model.eval()
    with torch.no_grad():
        model.memory_gate.fill_(1.0)
    tokens = random_batch().decoder_input
    z = torch.randn(tokens.shape[0], LATENT, generator=torch.Generator().manual_seed(0))
    moved = (model.decode(tokens, z) - base(tokens)).abs().max()
    assert moved > 1e-3


def test_decode_from_the_target_frame_equals_the_whole_pass_with_open_memory() -> None:
    """`first = X` with memory slots and an open gate: the target frame of the whole pass."""
    _, model = _make_cvae(z_memory=True)
    model.eval()
    with torch.no_grad():
        model.memory_gate.fill_(1.0)
        model.z_memory.weight.normal_()
    tokens = random_batch().decoder_input
    z = torch.randn(tokens.shape[0], LATENT, generator=torch.Generator().manual_seed(1))
    whole = target_frame(model.decode(tokens, z), MAX_X)
    torch.testing.assert_close(model.decode(tokens, z, first=MAX_X), whole, rtol=1e-5, atol=EXACT)


def _attention_inputs(slots: int) -> tuple[Tensor, ...]:
    gen = torch.Generator().manual_seed(3)
    q, k, v = (torch.randn(2, 2, 5, 4, generator=gen) for _ in range(3))
    keys, values = (torch.randn(2, 2, slots, 4, generator=gen) for _ in range(2))
    return q, k, v, keys, values


def _joint_by_hand(q: Tensor, k: Tensor, v: Tensor, keys: Tensor, values: Tensor) -> Tensor:
    """One softmax over the memory slot(s) and the causal keys, written out."""
    slots = keys.shape[2]
    scores = (q @ torch.cat([keys, k], dim=2).transpose(2, 3)) / 2.0  # sqrt(head size 4)
    future = torch.ones(5, 5, dtype=torch.bool).triu(1)
    scores[..., slots:] = scores[..., slots:].masked_fill(future, float("-inf"))
    return scores.softmax(dim=-1) @ torch.cat([values, v], dim=2)


def test_z_memory_attention_is_the_joint_softmax_over_slot_and_causal_keys() -> None:
    """With the gate fully open (tanh = 1), a block's attention equals one softmax over the
    memory slot and the causal keys, computed by hand."""
    q, k, v, keys, values = _attention_inputs(1)
    open_gate = torch.full((2,), 50.0)  # tanh(50) == 1 in float32
    mixed = Memory(keys, values, open_gate).attend(q, k, v, 0.0)
    assert torch.allclose(mixed, _joint_by_hand(q, k, v, keys, values), atol=1e-6)


def test_z_memory_attention_moves_from_causal_to_joint_by_the_gate() -> None:
    """causal + tanh(g)·(joint − causal) per head, against fused attention for both parts; a
    zero gate gives the causal attention exactly as without memory (up to float rounding)."""
    q, k, v, keys, values = _attention_inputs(1)
    causal = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    joint = _joint_by_hand(q, k, v, keys, values)
    gate = torch.tensor([0.3, -1.2])
    mixed = Memory(keys, values, gate).attend(q, k, v, 0.0)
    expected = causal + torch.tanh(gate)[None, :, None, None] * (joint - causal)
    assert torch.allclose(mixed, expected, atol=1e-6)
    closed = Memory(keys, values, torch.zeros(2)).attend(q, k, v, 0.0)
    assert torch.allclose(closed, causal, atol=1e-6)


def test_a_memory_holds_one_slot() -> None:
    _, _, _, keys, values = _attention_inputs(2)
    with pytest.raises(ValueError, match="one slot"):
        Memory(keys, values, torch.zeros(2))


def test_z_memory_attention_dropout_keeps_the_expectation() -> None:
    """Training dropout masks the attention weights (scaled by 1/(1−p)): averaged over many
    masks the output approaches the output without dropout."""
    q, k, v, keys, values = _attention_inputs(1)
    memory = Memory(keys, values, torch.tensor([0.7, 0.7]))
    plain = memory.attend(q, k, v, 0.0)
    torch.manual_seed(0)
    draws = torch.stack([memory.attend(q, k, v, 0.25) for _ in range(4000)])
    assert not torch.allclose(draws[0], plain, atol=1e-3)
    assert torch.allclose(draws.mean(dim=0), plain, atol=0.05)


def test_freeze_all_trains_only_injection_and_encoder() -> None:
    _, model = _make_cvae(freeze_decoder="all")
    _elbo_loss(model).backward()
    assert all(p.grad is None and not p.requires_grad for p in model.decoder.parameters())
    assert model.z_injection.weight.grad is not None
    assert model.z_injection.weight.grad.abs().max() > 0
    encoder_grads = [p.grad for p in model.posterior_encoder.parameters()]
    assert all(g is not None for g in encoder_grads)
    assert any(g.abs().max() > 0 for g in encoder_grads if g is not None)


def test_freeze_embeddings_freezes_only_embeddings() -> None:
    _, model = _make_cvae(freeze_decoder="embeddings")
    frozen = {n for n, p in model.decoder.named_parameters() if not p.requires_grad}
    assert frozen == {"tok_emb.weight", "pos_emb.weight"}


def test_freeze_none_trains_a_frozen_callers_base() -> None:
    base = make_small_base().requires_grad_(False)
    model = CVAE(base, _cvae_config(freeze_decoder="none"))
    assert all(p.requires_grad for p in model.parameters())
    assert not any(p.requires_grad for p in base.parameters())


def test_priors_start_at_standard_normal() -> None:
    batch = random_batch()
    for prior in ("standard", "conditional"):
        _, model = _make_cvae(prior=prior)
        mu, logvar = model.prior(batch.prior_input)
        assert mu.shape == logvar.shape == (batch.prior_input.shape[0], LATENT)
        assert torch.equal(mu, torch.zeros_like(mu))
        assert torch.equal(logvar, torch.zeros_like(logvar))


def test_posterior_shapes_and_logvar_clamp() -> None:
    _, model = _make_cvae()
    batch = random_batch()
    with torch.no_grad():
        model.posterior_encoder.out.bias.fill_(1e3)
    mu, logvar = model.posterior(batch.encoder_input)
    assert mu.shape == (batch.encoder_input.shape[0], LATENT)
    assert logvar.max() <= LOGVAR_MAX and logvar.min() >= LOGVAR_MIN
    assert torch.isfinite(reparameterize(mu, logvar)).all()
    assert model.bow_logits(mu).shape == (mu.shape[0], VOCAB.n_content)


def test_same_seed_same_init_and_outputs() -> None:
    (_, first), (_, second) = _make_cvae(seed=7), _make_cvae(seed=7)
    first_state, second_state = _state(first), _state(second)
    assert first_state.keys() == second_state.keys()
    assert all(torch.equal(v, second_state[k]) for k, v in first_state.items())
    losses = [_elbo_loss(m) for m in (first, second)]
    assert torch.equal(losses[0], losses[1])
    _, other = _make_cvae(seed=8)
    assert not torch.equal(_state(other)["decoder.head.weight"], first_state["decoder.head.weight"])


def test_checkpoint_round_trip_gives_identical_logits(tmp_path: Path) -> None:
    _, model = _make_cvae(prior="conditional")
    _elbo_loss(model).backward()
    torch.optim.SGD(model.parameters(), lr=0.1).step()
    model.eval()
    batch = random_batch()
    z = torch.randn(batch.decoder_input.shape[0], LATENT)

    save_cvae(tmp_path / "cvae.pt", model, extra={"base_sha256": "abc"})
    rng_before = torch.get_rng_state()
    loaded, payload = load_cvae(tmp_path / "cvae.pt")
    assert torch.equal(torch.get_rng_state(), rng_before)

    assert torch.equal(loaded.decode(batch.decoder_input, z), model.decode(batch.decoder_input, z))
    assert torch.equal(loaded.prior(batch.prior_input)[0], model.prior(batch.prior_input)[0])
    assert payload["base_sha256"] == "abc"
    assert read_checkpoint(tmp_path / "cvae.pt", KIND_CVAE)["base_sha256"] == "abc"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cvae.pt"]


def test_wrong_kind_and_bad_arguments_raise(tmp_path: Path) -> None:
    base, model = _make_cvae()
    path = tmp_path / "base.pt"
    save_base(path, base)
    with pytest.raises(DataError, match=str(path)):
        load_cvae(path)
    with pytest.raises(ValueError, match="reserved"):
        save_cvae(tmp_path / "c.pt", model, extra={"kind": "other"})
    # save_cvae takes no config of its own: the one stored is the model's, so it always
    # describes the weights beside it and rebuilds the same architecture.
    save_cvae(tmp_path / "c.pt", model)
    stored = read_checkpoint(tmp_path / "c.pt", KIND_CVAE)["config"]
    assert stored == model.checkpoint_config()
    assert stored["base"] == base.checkpoint_config()


def test_encoders_read_a_frozen_copy_of_the_base() -> None:
    """With encoders_read_base, both encoders add a projection of the base's final hidden states
    (the encoder input's last slot lies past the base's max_len and gets none); the copy never
    trains, keeps no gradient and stays in eval mode."""
    base, model = _make_cvae(prior="conditional", encoders_read_base=True)
    batch = random_batch()
    features = model.base_features(batch.encoder_input)
    assert features.shape == (*batch.decoder_input.shape, base.config.d_model)
    with torch.no_grad():
        expected = base.hidden(batch.encoder_input[:, : base.max_len])
    assert torch.equal(features, expected)
    assert model.base_features(batch.prior_input).shape[1] == batch.prior_input.shape[1]
    reader_before = _state(model.base_reader)
    model.train()
    assert not model.base_reader.training and model.posterior_encoder.training
    optimizer = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=1e-2)
    _elbo_loss(model).backward()
    optimizer.step()
    assert all(p.grad is None and not p.requires_grad for p in model.base_reader.parameters())
    assert all(torch.equal(v, reader_before[k]) for k, v in _state(model.base_reader).items())
    projection = model.posterior_encoder.feature_proj.weight
    assert projection.grad is not None and projection.grad.abs().max() > 0
    with torch.no_grad():  # the features reach the posterior: moving the reader moves q
        before = model.posterior(batch.encoder_input)[0]
        model.base_reader.ln_f.bias.add_(1.0)
        assert not torch.allclose(model.posterior(batch.encoder_input)[0], before)


def test_without_reading_the_base_there_is_no_reader() -> None:
    _, model = _make_cvae(prior="conditional", encoders_read_base=False)
    assert model.base_reader is None and model.base_features(random_batch().encoder_input) is None
    assert model.posterior_encoder.feature_proj is None
    with pytest.raises(ValueError, match="features must be given exactly"):
        model.posterior_encoder(random_batch().encoder_input, torch.zeros(1, 1, 1))


def test_checkpoint_round_trip_keeps_the_base_reader(tmp_path: Path) -> None:
    _, model = _make_cvae(prior="conditional", encoders_read_base=True)
    model.eval()
    batch = random_batch()
    save_cvae(tmp_path / "cvae.pt", model)
    loaded, _ = load_cvae(tmp_path / "cvae.pt")
    assert torch.equal(
        loaded.posterior(batch.encoder_input)[0], model.posterior(batch.encoder_input)[0]
    )
    assert torch.equal(loaded.prior(batch.prior_input)[1], model.prior(batch.prior_input)[1])


def test_the_priors_reader_features_are_the_prefix_of_the_posteriors() -> None:
    """The base is causal, so one reader pass over [x, SEP, y, EOS] serves both encoders: its
    first X+1 states equal a separate pass over the prior input [x, SEP] (up to rounding)."""
    from zgain.cvae.member import ReaderFeatures

    _, model = _make_cvae(encoders_read_base=True, prior="conditional")
    batch = random_batch(seed=4, batch_size=8)
    shared = ReaderFeatures.of(model, batch)
    separate = model.base_features(batch.prior_input)
    assert shared.prior is not None and separate is not None
    assert shared.prior.shape == separate.shape
    torch.testing.assert_close(shared.prior, separate, atol=1e-6, rtol=1e-6)
    mu_shared, _ = model.prior(batch.prior_input, shared.prior)
    mu_alone, _ = model.prior(batch.prior_input)
    torch.testing.assert_close(mu_shared, mu_alone, atol=1e-6, rtol=1e-6)
