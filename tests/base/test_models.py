"""Facts about the base LM: config checks, causality, the embedding offset, checkpoints, devices.

The CVAE built on it is tested in tests/cvae/test_cvae_model.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from conftest import (
    MODEL_MAX_X,
    MODEL_MAX_Y,
    MODEL_SEQ_LEN,
    MODEL_VOCAB,
    make_small_base,
    random_batch,
    small_base_config,
)

from zgain.base.model import KIND_BASE, BaseLM, Block, causal_mask, load_base, save_base
from zgain.core.checkpoint import read_checkpoint, write_checkpoint
from zgain.core.environment import autocast_context, resolve_device
from zgain.core.errors import DataError, ParamsError
from zgain.core.io import sha256_file
from zgain.params import TransformerConfig

VOCAB, MAX_X, MAX_Y, SEQ_LEN = MODEL_VOCAB, MODEL_MAX_X, MODEL_MAX_Y, MODEL_SEQ_LEN


def test_configs_reject_invalid_values() -> None:
    with pytest.raises(ValueError, match="d_model"):
        TransformerConfig(d_model=10, n_layers=1, n_heads=3, d_ff=8, dropout=0.0)
    with pytest.raises(ValueError, match="dropout"):
        small_base_config(dropout=1.0)
    with pytest.raises(ValueError, match="max_len"):
        BaseLM(small_base_config(), VOCAB, 0)


def test_base_is_causal() -> None:
    base = make_small_base()
    tokens = random_batch().decoder_input
    changed = tokens.clone()
    cut = 6
    changed[:, cut:] = (changed[:, cut:] + 1) % VOCAB.size
    before, after = base(tokens), base(changed)
    assert torch.equal(before[:, :cut], after[:, :cut])
    assert not torch.allclose(before[:, cut:], after[:, cut:])


def test_embed_offset_shapes_agree() -> None:
    base = make_small_base()
    tokens = random_batch().decoder_input
    offset = torch.randn(tokens.shape[0], base.config.d_model)
    per_position = offset[:, None, :].expand(-1, tokens.shape[1], -1)
    assert torch.equal(base(tokens, offset), base(tokens, per_position))
    assert not torch.allclose(base(tokens, offset), base(tokens))


def test_causal_mask_lets_the_last_queries_see_themselves_and_every_earlier_key() -> None:
    expected = torch.tensor([[1, 1, 1, 0], [1, 1, 1, 1]], dtype=torch.bool)
    assert torch.equal(causal_mask(2, 4, "cpu"), expected)
    assert torch.equal(causal_mask(3, 3, "cpu"), torch.ones(3, 3, dtype=torch.bool).tril())


@pytest.mark.parametrize("first", [1, MAX_X, SEQ_LEN - 1])
def test_first_gives_the_rows_of_the_whole_pass_and_their_gradients(first: int) -> None:
    """The last block works on the kept rows alone; values and the gradients of any weighted
    sum of them are those of the whole pass sliced (every earlier row still gives keys)."""
    base = make_small_base().train()  # dropout 0: the same function in either mode
    tokens = random_batch().decoder_input
    mix = torch.randn(tokens.shape[0], tokens.shape[1] - first, VOCAB.size)
    results = []
    for kept in (lambda: base(tokens, first=first), lambda: base(tokens)[:, first:]):
        base.zero_grad()
        logits = kept()
        (logits * mix).sum().backward()
        results.append([logits.detach()] + [p.grad.clone() for p in base.parameters()])
    for ours, whole in zip(*results, strict=True):
        torch.testing.assert_close(ours, whole, rtol=1e-5, atol=1e-6)


def test_first_outside_the_sequence_or_on_a_bidirectional_block_raises() -> None:
    base = make_small_base()
    tokens = random_batch().decoder_input
    for bad in (-1, tokens.shape[1]):
        with pytest.raises(ValueError, match="first"):
            base(tokens, first=bad)
    block = Block(8, 2, 16, 0.0, causal=False)
    with pytest.raises(ValueError, match="first"):
        block(torch.randn(2, 5, 8), first=1)


def test_checkpoint_round_trip_gives_identical_logits(tmp_path: Path) -> None:
    base = make_small_base()
    batch = random_batch()

    save_base(tmp_path / "base.pt", base, extra={"note": "x"})
    rng_before = torch.get_rng_state()
    loaded = load_base(tmp_path / "base.pt")
    assert torch.equal(torch.get_rng_state(), rng_before)

    assert torch.equal(loaded(batch.decoder_input), base(batch.decoder_input))
    assert loaded.checkpoint_config() == base.checkpoint_config()
    assert read_checkpoint(tmp_path / "base.pt", KIND_BASE)["note"] == "x"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["base.pt"]


def test_wrong_kind_and_bad_arguments_raise(tmp_path: Path) -> None:
    base = make_small_base()
    other = tmp_path / "other.pt"
    write_checkpoint(other, "other", base.checkpoint_config(), base)
    with pytest.raises(DataError, match=str(other)):
        load_base(other)
    path = tmp_path / "base.pt"
    save_base(path, base)
    with pytest.raises(ValueError, match="reserved"):
        save_base(tmp_path / "b.pt", base, extra={"kind": "other"})
    # The stored config is the model's own, so it always describes the weights it sits beside.
    assert read_checkpoint(path, KIND_BASE)["config"] == base.checkpoint_config()


def test_sha256_file(tmp_path: Path) -> None:
    path = tmp_path / "data.bin"
    path.write_bytes(b"abc")
    expected = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    assert sha256_file(path) == expected


def test_devices() -> None:
    assert resolve_device("cpu") == torch.device("cpu")
    assert resolve_device("auto").type in {"cuda", "mps", "cpu"}
    if not torch.cuda.is_available():
        with pytest.raises(ParamsError, match="cuda"):
            resolve_device("cuda")
    with autocast_context(torch.device("cpu")):
        assert not torch.is_autocast_enabled("cpu")


def test_one_exponential_pass_gives_softmax_and_logsumexp_with_their_gradients() -> None:
    """Rows with masked (-inf) keys, as the causal memory attention builds them: the values and
    the gradients of any weighted sum of both outputs equal torch's softmax and logsumexp."""
    from zgain.base.model import softmax_and_log_normalizer

    torch.manual_seed(0)
    future = torch.ones(7, 7, dtype=torch.bool).triu(1)
    raw = (10 * torch.randn(3, 2, 7, 7, dtype=torch.float64)).masked_fill(future, float("-inf"))
    mix_w, mix_l = torch.randn(3, 2, 7, 7, dtype=torch.float64), torch.randn(3, 2, 7, 1)
    grads = []
    for fn in (
        softmax_and_log_normalizer,
        lambda s: (s.softmax(dim=-1), s.logsumexp(dim=-1, keepdim=True)),
    ):
        scores = raw.clone().requires_grad_(True)
        weights, norm = fn(scores)
        ((weights * mix_w).sum() + (norm * mix_l.double()).sum()).backward()
        grads.append((weights.detach(), norm.detach(), scores.grad))
    for ours, reference in zip(grads[0], grads[1], strict=True):
        torch.testing.assert_close(ours, reference, rtol=1e-12, atol=1e-12)
    assert torch.all(grads[0][0].masked_select(future) == 0)  # no weight on a future key
