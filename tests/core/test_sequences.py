"""The sequence layouts, checked token by token on a hand-written batch."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from zgain.core.sequences import SeqBatch, pack, target_frame
from zgain.core.vocab import Vocab

VOCAB = Vocab(n_content=5)
P, S, E = VOCAB.pad, VOCAB.sep, VOCAB.eos  # 5, 6, 7
X, Y = 4, 3  # max_x_len, max_y_len; T = 4

# Example 0: x = [1, 2, 3], y = [4, 0]. Example 1: x = [2], y = [1, 1, 3].
# Right padding uses arbitrary values on purpose: pack must ignore them.
X_TOKENS = np.array([[1, 2, 3], [2, -1, 99]])
X_LEN = np.array([3, 1])
Y_TOKENS = np.array([[4, 0, 42], [1, 1, 3]])
Y_LEN = np.array([2, 3])


def _pack(**overrides: object) -> SeqBatch:
    args = {"x": X_TOKENS, "x_len": X_LEN, "y": Y_TOKENS, "y_len": Y_LEN} | overrides
    return pack(**args, vocab=VOCAB, max_x_len=X, max_y_len=Y)  # type: ignore[arg-type]


def test_vocab_ids() -> None:
    assert (VOCAB.pad, VOCAB.sep, VOCAB.eos, VOCAB.size) == (5, 6, 7, 8)
    assert Vocab.from_size(8) == VOCAB


def test_hand_written_batch_layout() -> None:
    batch = _pack()
    expected = {
        "decoder_input": [[P, 1, 2, 3, S, 4, 0, P], [P, P, P, 2, S, 1, 1, 3]],
        "targets": [[4, 0, E, P], [1, 1, 3, E]],
        "encoder_input": [[P, 1, 2, 3, S, 4, 0, E, P], [P, P, P, 2, S, 1, 1, 3, E]],
        "prior_input": [[P, 1, 2, 3, S], [P, P, P, 2, S]],
    }
    for name, value in expected.items():
        got = getattr(batch, name)
        assert got.dtype == torch.int64, name
        assert torch.equal(got, torch.tensor(value)), name
    assert torch.equal(batch.mask, torch.tensor([[True, True, True, False], [True] * 4]))


def test_torch_and_numpy_inputs_agree() -> None:
    from_numpy = _pack()
    from_torch = _pack(
        x=torch.from_numpy(X_TOKENS),
        x_len=torch.from_numpy(X_LEN),
        y=torch.from_numpy(Y_TOKENS).int(),
        y_len=torch.from_numpy(Y_LEN),
    )
    assert all(torch.equal(a, b) for a, b in zip(from_numpy, from_torch, strict=True))


def test_sep_always_at_index_x_and_teacher_forcing_matches_targets() -> None:
    rng = np.random.default_rng(0)
    batch_size = 32
    x_len = rng.integers(0, X + 1, batch_size)
    y_len = rng.integers(0, Y + 1, batch_size)
    x = rng.integers(0, VOCAB.n_content, (batch_size, X))
    y = rng.integers(0, VOCAB.n_content, (batch_size, Y))
    batch = pack(x, x_len, y, y_len, vocab=VOCAB, max_x_len=X, max_y_len=Y)
    for tensor in (batch.decoder_input, batch.encoder_input, batch.prior_input):
        assert (tensor[:, X] == S).all()
        assert (tensor[:, :X] != S).all()
    assert torch.equal(batch.mask.sum(dim=1), torch.from_numpy(y_len) + 1)
    # The decoder reads target t-1 at index X+t: a y token wherever target t is supervised.
    shifted = batch.decoder_input[:, X + 1 :]  # (B, T-1)
    inner = batch.mask[:, 1:]  # target t>=1 supervised <=> y_{t-1} exists
    assert torch.equal(shifted[inner], batch.targets[:, :-1][inner])
    assert torch.equal(batch.encoder_input[:, X + 1 :], batch.targets)


def test_empty_y_is_only_eos() -> None:
    batch = _pack(y_len=np.array([0, 3]))
    assert batch.targets[0].tolist() == [E, P, P, P]
    assert batch.mask[0].tolist() == [True, False, False, False]
    assert batch.decoder_input[0, X + 1 :].tolist() == [P, P, P]


def test_arrays_wider_than_the_frame_are_cropped() -> None:
    wide_x = np.concatenate([X_TOKENS, np.full((2, 3), 7)], axis=1)  # (2, 6) > X
    assert torch.equal(_pack(x=wide_x).decoder_input, _pack().decoder_input)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"x_len": np.array([3, 5])}, r"x_len\[1\] = 5"),
        ({"x_len": np.array([-1, 1])}, r"x_len\[0\] = -1"),
        ({"x_len": np.array([4, 1])}, r"x_len\[0\] = 4"),  # beyond the array width 3
        ({"y_len": np.array([2, 4])}, r"y_len\[1\] = 4"),
        ({"x": np.array([[1, 2, 5], [2, 0, 0]])}, r"x\[0, 2\] = 5"),
        ({"y": np.array([[4, -3, 0], [1, 1, 3]])}, r"y\[0, 1\] = -3"),
        ({"y_len": np.array([2])}, "batch size"),
        ({"x": X_TOKENS.astype(float)}, "integer"),
    ],
)
def test_invalid_inputs_raise_naming_the_value(overrides: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        _pack(**overrides)


def test_target_frame_slices_the_y_frame() -> None:
    logits = torch.arange(2 * (X + Y + 1) * 3).reshape(2, X + Y + 1, 3).float()
    frame = target_frame(logits, X)
    assert frame.shape == (2, Y + 1, 3)
    assert torch.equal(frame[:, 0], logits[:, X])
    with pytest.raises(ValueError, match="expected"):
        target_frame(logits[:, :X], X)
