"""How (x, y) pairs are laid out as token sequences for the base LM, the decoder and the encoders.

Every sequence uses fixed frames: x is LEFT-padded with PAD to `max_x_len` (X) so SEP always sits
at index X, and the y frame has T = max_y_len + 1 supervised slots (the y tokens, then EOS).
Fixed frames make the logit of target t sit at the same index X + t in every example, so the
target frame is one slice and per-position tables line up across the batch.

Layouts (P = PAD, n = y_len, L = x_len):

    decoder_input (B, X+T):   [P..P, x_0..x_{L-1}, SEP, y_0..y_{n-1}, P..P]
    targets       (B, T):     [y_0..y_{n-1}, EOS, P..P]        mask: t <= n
    encoder_input (B, X+1+T): [P..P, x_0..x_{L-1}, SEP, y_0..y_{n-1}, EOS, P..P]
    prior_input   (B, X+1):   [P..P, x_0..x_{L-1}, SEP]
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

import numpy as np
import torch
from torch import Tensor

from zgain.core.vocab import Vocab

IntArray = np.ndarray | Tensor


class SeqBatch(NamedTuple):
    """A packed batch; every field is a torch int64 tensor except `mask` (bool)."""

    decoder_input: Tensor
    """(B, X+T): the causal LM input; the logit at index X+t predicts targets[:, t]."""
    targets: Tensor
    """(B, T): y tokens, then EOS, then PAD."""
    mask: Tensor
    """(B, T) bool: True on the supervised positions (the y tokens and EOS)."""
    encoder_input: Tensor
    """(B, X+1+T): the posterior encoder input [x, SEP, y, EOS]."""
    prior_input: Tensor
    """(B, X+1): the conditional prior input [x, SEP]."""

    def to(self, device: torch.device | str) -> SeqBatch:
        """The same batch with every tensor moved to `device`."""
        return SeqBatch(*(t.to(device) for t in self))


def _as_int64(name: str, array: IntArray, ndim: int) -> Tensor:
    tensor = torch.as_tensor(array)
    if tensor.dtype.is_floating_point or tensor.dtype.is_complex or tensor.dtype == torch.bool:
        raise ValueError(f"{name}: must be an integer array, got dtype {tensor.dtype}")
    if tensor.dim() != ndim:
        raise ValueError(f"{name}: must have {ndim} dimensions, got shape {tuple(tensor.shape)}")
    return tensor.to(torch.int64)


def _check_lengths(name: str, lengths: Tensor, frame: int, width: int) -> None:
    """Lengths must fit both the fixed frame and the array that holds the tokens."""
    limit = min(frame, width)
    bad = (lengths < 0) | (lengths > limit)
    if bool(bad.any()):
        index = int(bad.nonzero()[0, 0])
        raise ValueError(
            f"{name}[{index}] = {int(lengths[index])} is outside 0..{limit} "
            f"(frame {frame}, array width {width})"
        )


def _fit_width(tokens: Tensor, width: int, fill: int) -> Tensor:
    """Right-padded (B, W) -> (B, width): crop or extend the padding; lengths were checked."""
    current = tokens.shape[1]
    if current >= width:
        return tokens[:, :width]
    extra = tokens.new_full((tokens.shape[0], width - current), fill)
    return torch.cat([tokens, extra], dim=1)


def _content_or_pad(name: str, tokens: Tensor, lengths: Tensor, vocab: Vocab) -> Tensor:
    """Right-padded (B, W): check the tokens before each length, set the rest to PAD."""
    inside = torch.arange(tokens.shape[1], device=tokens.device) < lengths[:, None]  # (B, W)
    bad = inside & ((tokens < 0) | (tokens >= vocab.n_content))
    if bool(bad.any()):
        row, col = (int(i) for i in bad.nonzero()[0])
        raise ValueError(
            f"{name}[{row}, {col}] = {int(tokens[row, col])} is not a content token "
            f"(0..{vocab.n_content - 1})"
        )
    return torch.where(inside, tokens, vocab.pad)


def pack(
    x: IntArray,
    x_len: IntArray,
    y: IntArray,
    y_len: IntArray,
    *,
    vocab: Vocab,
    max_x_len: int,
    max_y_len: int,
) -> SeqBatch:
    """Lay out a batch of (x, y) pairs in the fixed frames of the module docstring.

    x (B, Lx) and y (B, Ly) are right-padded int arrays (numpy or torch; any pad value),
    x_len (B,) and y_len (B,) their lengths. Raises ValueError naming the offending value when
    a length does not fit its frame or a token is not a content token.
    """
    if max_x_len < 1 or max_y_len < 1:
        raise ValueError(f"frames must be >= 1, got max_x_len={max_x_len}, max_y_len={max_y_len}")
    x_t = _as_int64("x", x, ndim=2)
    y_t = _as_int64("y", y, ndim=2)
    x_len_t = _as_int64("x_len", x_len, ndim=1)
    y_len_t = _as_int64("y_len", y_len, ndim=1)
    batch, device = x_t.shape[0], x_t.device
    for name, t in (("y", y_t), ("x_len", x_len_t), ("y_len", y_len_t)):
        if t.shape[0] != batch:
            raise ValueError(f"{name}: batch size {t.shape[0]} differs from x's {batch}")
    y_t, x_len_t, y_len_t = (t.to(device) for t in (y_t, x_len_t, y_len_t))
    _check_lengths("x_len", x_len_t, max_x_len, x_t.shape[1])
    _check_lengths("y_len", y_len_t, max_y_len, y_t.shape[1])

    x_right = _content_or_pad("x", _fit_width(x_t, max_x_len, vocab.pad), x_len_t, vocab)
    y_frame = _content_or_pad("y", _fit_width(y_t, max_y_len, vocab.pad), y_len_t, vocab)

    # Left-pad x: slot j holds x_{j - (X - L)}, PAD where that index is negative.
    slot = torch.arange(max_x_len, device=device)[None, :]  # (1, X)
    source = slot - (max_x_len - x_len_t[:, None])  # (B, X)
    gathered = x_right.gather(1, source.clamp(min=0))  # (B, X)
    x_left = torch.where(source >= 0, gathered, vocab.pad)  # (B, X)

    sep = torch.full((batch, 1), vocab.sep, dtype=torch.int64, device=device)  # (B, 1)
    pad = torch.full((batch, 1), vocab.pad, dtype=torch.int64, device=device)  # (B, 1)
    # EOS goes right after the last y token: slot n of the T-wide target frame.
    targets = torch.cat([y_frame, pad], dim=1)  # (B, T)
    targets.scatter_(1, y_len_t[:, None], vocab.eos)
    mask = torch.arange(max_y_len + 1, device=device)[None, :] <= y_len_t[:, None]  # (B, T)

    return SeqBatch(
        decoder_input=torch.cat([x_left, sep, y_frame], dim=1),  # (B, X+T)
        targets=targets,
        mask=mask,
        encoder_input=torch.cat([x_left, sep, targets], dim=1),  # (B, X+1+T)
        prior_input=torch.cat([x_left, sep], dim=1),  # (B, X+1)
    )


def target_frame(logits: Tensor, max_x_len: int) -> Tensor:
    """The logits that predict the targets: (B, X+T, V) -> (B, T, V), index X+t predicts t."""
    if logits.dim() != 3 or logits.shape[1] <= max_x_len:
        raise ValueError(
            f"logits: expected (B, X+T, V) with X={max_x_len}, got shape {tuple(logits.shape)}"
        )
    return logits[:, max_x_len:, :]


def select(batch: SeqBatch, index: Tensor | slice) -> SeqBatch:
    """The rows `index` of every tensor of a packed batch."""
    return SeqBatch(*(t[index] for t in batch))


def chunks(n: int, batch_size: int) -> Iterator[slice]:
    """Consecutive slices covering 0..n (evaluation order)."""
    for start in range(0, n, batch_size):
        yield slice(start, min(start + batch_size, n))


def minibatches(n: int, batch_size: int, generator: torch.Generator) -> Iterator[Tensor]:
    """Endless shuffled index batches over n examples (each epoch a fresh permutation)."""
    while True:
        order = torch.randperm(n, generator=generator)
        for start in range(0, n - batch_size + 1 if n >= batch_size else 1, batch_size):
            yield order[start : start + batch_size]
