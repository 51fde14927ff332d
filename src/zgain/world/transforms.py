"""The K strategies of the synthetic world: y = f_s(x), each an index map over x.

docs/method.md#the-synthetic-world. The names here are the values `data.transforms` accepts.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

IntArray = np.ndarray
# An index map takes positions t (1, Ly) and x lengths (N, 1) and returns, per position, the x
# index that y_t copies and the y length: y_t = x[src_t] (+ shift mod V for `shift`), t < y_len.
IndexMap = Callable[[IntArray, IntArray], tuple[IntArray, IntArray]]


def _copy(t: IntArray, length: IntArray) -> tuple[IntArray, IntArray]:
    return t, length


def _reverse(t: IntArray, length: IntArray) -> tuple[IntArray, IntArray]:
    return length - 1 - t, length


def _rotate(t: IntArray, length: IntArray) -> tuple[IntArray, IntArray]:
    return (t + 1) % np.maximum(length, 1), length


def _drop_first(t: IntArray, length: IntArray) -> tuple[IntArray, IntArray]:
    return t + 1, length - 1


def _double(t: IntArray, length: IntArray) -> tuple[IntArray, IntArray]:
    return t % np.maximum(length, 1), 2 * length


# name -> (index map, whether the transform adds `shift` to every token)
TRANSFORMS: dict[str, tuple[IndexMap, bool]] = {
    "copy": (_copy, False),
    "reverse": (_reverse, False),
    "shift": (_copy, True),
    "rotate": (_rotate, False),
    "drop_first": (_drop_first, False),
    "double": (_double, False),
}
LENGTH_FACTOR = {"double": 2}  # the longest y a transform makes, as a multiple of the x length
MIN_VOCAB = 2  # fewer content tokens than this leave nothing to transform


def longest_y(transforms: Sequence[str], length_max: int, prefix: int = 0) -> int:
    """The longest y the world makes: the shared prefix (at most `length_max` tokens of x), then
    the longest f_s(x)."""
    factor = max((LENGTH_FACTOR.get(name, 1) for name in transforms), default=1)
    return min(prefix, length_max) + factor * length_max


def min_vocab_size(transforms: Sequence[str], shift: int) -> int:
    """The smallest V for which every transform is well defined and `shift` is not the identity."""
    need = MIN_VOCAB
    if "shift" in transforms:
        need = max(need, abs(shift) + 1)
    return need
