"""The base's greedy outputs and their error rates against every y listed for an x."""

from __future__ import annotations

import numpy as np
import torch
from conftest import make_small_base

from zgain.base.decode import base_error_rates, edit_distance, error_rates, greedy_outputs
from zgain.world.frames import Frames


def test_edit_distance_by_hand() -> None:
    assert edit_distance((), ()) == 0
    assert edit_distance((1, 2, 3), ()) == 3
    assert edit_distance((1, 2, 3), (1, 3)) == 1  # one deletion
    assert edit_distance((1, 2, 3), (3, 2, 1)) == 2  # two substitutions
    assert edit_distance((5, 1, 2), (1, 2, 6)) == 2  # a deletion and an insertion


def test_error_rates_score_each_x_once_against_its_nearest_listing() -> None:
    # x = (0,) lists y (1, 2) and (1, 3); x = (4,) lists (2,); x = (5, 5) lists (1, 1, 1)
    x = np.array([[0, 0], [0, 0], [4, 0], [5, 5]])
    x_len = np.array([1, 1, 1, 2])
    y = np.array([[1, 2, 0], [1, 3, 0], [2, 0, 0], [1, 1, 1]])
    y_len = np.array([2, 2, 1, 3])
    outputs = [(1, 3), (1, 3), (3,), (1, 1)]  # right, right (same x), wrong by 1, wrong by 1
    rates = error_rates(x, x_len, y, y_len, outputs)
    assert rates["distinct_x"] == 3.0
    assert rates["sequence_error_rate"] == 2 / 3
    assert rates["token_error_rate"] == (0 + 1 + 1) / (2 + 1 + 3)


def test_greedy_outputs_follow_the_argmax_and_stop_at_eos() -> None:
    torch.manual_seed(0)
    base = make_small_base(3)
    frames = Frames(base.vocab.n_content, 4, 5)
    x = np.array([[0, 1, 2, 0], [3, 3, 0, 0]])
    x_len = np.array([3, 2])
    out = greedy_outputs(base, x, x_len, frames, batch_size=1, device=torch.device("cpu"))
    for row, seq in enumerate(out):
        assert len(seq) <= frames.max_y_len and all(0 <= t < base.vocab.n_content for t in seq)
        # replaying the output: each token is the argmax over content tokens and EOS
        from zgain.core.sequences import pack

        ys = np.array([list(seq) + [0] * (frames.max_y_len - len(seq))])
        batch = pack(x[row : row + 1], x_len[row : row + 1], ys, np.array([len(seq)]),
                     vocab=base.vocab, max_x_len=4, max_y_len=5)  # fmt: skip
        logits = base(batch.decoder_input)[0, 4 : 4 + len(seq) + 1]
        logits[:, base.vocab.n_content : base.vocab.eos] = float("-inf")
        chosen = logits.argmax(-1).tolist()
        expected = list(seq) + ([base.vocab.eos] if len(seq) < frames.max_y_len else [])
        assert chosen[: len(expected)] == expected


def test_base_error_rates_decode_each_distinct_x_once() -> None:
    base = make_small_base(3)
    frames = Frames(base.vocab.n_content, 4, 5)
    x = np.array([[0, 1, 0, 0], [0, 1, 0, 0], [2, 0, 0, 0]])
    x_len = np.array([2, 2, 1])
    y = np.array([[1, 0, 0, 0, 0], [2, 2, 0, 0, 0], [1, 1, 1, 0, 0]])
    y_len = np.array([1, 2, 3])
    rates = base_error_rates(
        base, x, x_len, y, y_len, frames, batch_size=8, device=torch.device("cpu")
    )
    outputs = greedy_outputs(base, x, x_len, frames, batch_size=8, device=torch.device("cpu"))
    assert rates == error_rates(x, x_len, y, y_len, outputs)
