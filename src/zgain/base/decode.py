"""The base model's greedy output for each x, scored against every y listed for that x.

The usual measure of a sequence-to-sequence model (for a dictionary: the word and phoneme
error rates of grapheme-to-phoneme conversion): the sequence error rate is the share of
distinct test x whose greedy output is none of the y listed for it; the token error rate is
Σ_x min_y edit(out_x, y) / Σ_x |y*_x|, with y*_x the nearest listed y (docs/own-data.md).
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import torch

from zgain.base.model import BaseLM
from zgain.core.sequences import pack
from zgain.world.frames import Frames


@torch.no_grad()
def greedy_outputs(
    model: BaseLM,
    x: np.ndarray,
    x_len: np.ndarray,
    frames: Frames,
    *,
    batch_size: int,
    device: torch.device,
) -> list[tuple[int, ...]]:
    """The argmax continuation of each x (N, X) until EOS or the y frame is full."""
    model.eval().to(device)
    vocab, x_frame, t_frame = frames.vocab, frames.max_x_len, frames.n_targets
    allowed = torch.full((vocab.size,), float("-inf"), device=device)
    allowed[: vocab.n_content] = 0.0
    allowed[vocab.eos] = 0.0
    out: list[tuple[int, ...]] = []
    for start in range(0, len(x_len), batch_size):
        xs, lens = x[start : start + batch_size], x_len[start : start + batch_size]
        n = len(lens)
        empty = np.zeros((n, frames.max_y_len), dtype=np.int64)
        tokens = pack(
            xs, lens, empty, np.zeros(n, dtype=np.int64), vocab=vocab,
            max_x_len=x_frame, max_y_len=frames.max_y_len,
        ).decoder_input.to(device)  # fmt: skip
        done = torch.zeros(n, dtype=torch.bool, device=device)
        lengths = torch.full((n,), frames.max_y_len, dtype=torch.int64, device=device)
        for t in range(t_frame):
            logits = model(tokens)[:, x_frame + t] + allowed  # (n, V)
            choice = logits.argmax(-1)
            ended = (choice == vocab.eos) & ~done
            lengths[ended] = t
            done |= ended
            if done.all() or t + 1 >= t_frame:
                break
            tokens[:, x_frame + 1 + t] = torch.where(done, vocab.pad, choice)
        y = tokens[:, x_frame + 1 :].cpu().numpy()
        out += [tuple(int(v) for v in y[i, : int(lengths[i])]) for i in range(n)]
    return out


def edit_distance(a: tuple[int, ...], b: tuple[int, ...]) -> int:
    """Levenshtein distance (insertions, deletions, substitutions, each 1)."""
    row = list(range(len(b) + 1))
    for i, ta in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, tb in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (ta != tb))
    return row[-1]


def error_rates(
    x: np.ndarray, x_len: np.ndarray, y: np.ndarray, y_len: np.ndarray, outputs: list
) -> dict[str, float]:
    """Sequence and token error rates of `outputs` (one per row) over the distinct x, each
    against the y listed for it in these rows (module docstring)."""
    listed: dict[tuple[int, ...], set[tuple[int, ...]]] = defaultdict(set)
    guess: dict[tuple[int, ...], tuple[int, ...]] = {}
    for i in range(len(x_len)):
        key = tuple(int(v) for v in x[i, : x_len[i]])
        listed[key].add(tuple(int(v) for v in y[i, : y_len[i]]))
        guess[key] = outputs[i]
    wrong, edits, length = 0, 0, 0
    for key, ys in listed.items():
        out = guess[key]
        wrong += out not in ys
        distance, reference_length = min((edit_distance(out, ref), len(ref)) for ref in ys)
        edits += distance
        length += reference_length
    return {
        "sequence_error_rate": wrong / len(listed),
        "token_error_rate": edits / max(length, 1),
        "distinct_x": float(len(listed)),
    }


def base_error_rates(
    model: BaseLM,
    x: np.ndarray,
    x_len: np.ndarray,
    y: np.ndarray,
    y_len: np.ndarray,
    frames: Frames,
    *,
    batch_size: int,
    device: torch.device,
) -> dict[str, float]:
    """`error_rates` of the base's greedy outputs, decoding each distinct x once."""
    keys = [tuple(int(v) for v in x[i, : x_len[i]]) for i in range(len(x_len))]
    first = {}
    for i, key in enumerate(keys):
        first.setdefault(key, i)
    rows = np.fromiter(first.values(), dtype=np.int64)
    decoded = greedy_outputs(
        model, x[rows], x_len[rows], frames, batch_size=batch_size, device=device
    )
    by_key = dict(zip(first, decoded, strict=True))
    return error_rates(x, x_len, y, y_len, [by_key[key] for key in keys])
