"""Helpers of the world tests: tiny worlds, every (x, y) pair of one, and the oracle's quantities
computed again by brute force, from the world's definition written out independently of
zgain.world.synthetic (docs/method.md#the-exact-oracle)."""

from __future__ import annotations

import itertools
import math
from typing import NamedTuple

import numpy as np

from zgain.world.synthetic import Oracle, World, oracle

TOL = 1e-9  # absolute tolerance of quantities that are equal in real arithmetic
N_SE = 4.0  # Monte Carlo checks allow this many standard errors


def make_world(transforms: tuple[str, ...], prior: str, noise: float, **kw) -> World:
    """A world over V = 3 content tokens and x lengths 1..3; `kw` overrides any field."""
    fields = {
        "vocab_size": 3,
        "length_min": 1,
        "length_max": 3,
        "transforms": transforms,
        "shift": 1,
        "prior": prior,
        "prior_temperature": 0.5,
        "noise": noise,
    }
    return World(**(fields | kw))


def pad_rows(rows: list[tuple[int, ...]], width: int, pad: int) -> tuple[np.ndarray, np.ndarray]:
    """Right-pad variable-length rows into (N, width) with their lengths (N,)."""
    out = np.full((len(rows), width), pad, dtype=np.int64)
    for i, row in enumerate(rows):
        out[i, : len(row)] = row
    return out, np.array([len(r) for r in rows], dtype=np.int64)


def all_sequences(vocab_size: int, min_len: int, max_len: int) -> list[tuple[int, ...]]:
    return [
        seq
        for n in range(min_len, max_len + 1)
        for seq in itertools.product(range(vocab_size), repeat=n)
    ]


# --- every x and every y of a tiny world ----------------------------------------------------


class Enumeration(NamedTuple):
    world: World
    xs: list[tuple[int, ...]]  # every x
    ys: list[tuple[int, ...]]  # every y of length 0..max_y_len
    out: Oracle  # the oracle of every (x, y) pair, x-major: row = i_x * len(ys) + i_y

    def per_x(self, values: np.ndarray) -> np.ndarray:
        """Reshape a per-row array into (n_x, n_y, ...)."""
        return values.reshape(len(self.xs), len(self.ys), *values.shape[1:])


def enumerate_world(world: World) -> Enumeration:
    """The oracle of every (x, y) pair of `world`."""
    xs = all_sequences(world.vocab_size, world.length_min, world.length_max)
    ys = all_sequences(world.vocab_size, 0, world.max_y_len)
    x, x_len = pad_rows(xs, world.length_max, world.vocab.pad)
    y, y_len = pad_rows(ys, world.max_y_len, world.vocab.pad)
    n_x, n_y = len(xs), len(ys)
    rows_x, rows_y = np.repeat(np.arange(n_x), n_y), np.tile(np.arange(n_y), n_x)
    out = oracle(world, x[rows_x], x_len[rows_x], y[rows_y], y_len[rows_y])
    return Enumeration(world, xs, ys, out)


# --- the world written out by hand ----------------------------------------------------------


def reference_transform(name: str, x: tuple[int, ...], shift: int, vocab_size: int) -> list[int]:
    """f_name(x) written out independently of zgain.world."""
    return {
        "copy": list(x),
        "reverse": list(reversed(x)),
        "shift": [(v + shift) % vocab_size for v in x],
        "rotate": list(x[1:]) + list(x[:1]),
        "drop_first": list(x[1:]),
        "double": list(x) * 2,
    }[name]


def reference_output(world: World, name: str, x: tuple[int, ...]) -> list[int]:
    """The noise-free y of strategy `name`: x's first min(prefix, L) tokens, then f_name(x)."""
    return list(x[: world.prefix]) + reference_transform(name, x, world.shift, world.vocab_size)


def reference_slot_noise(world: World, t: int) -> float:
    """ε_t: the decoy noise at a decoy slot, the noise elsewhere."""
    return world.decoy_noise if t in world.decoy_positions else world.noise


def reference_prior(world: World, x: tuple[int, ...]) -> np.ndarray:
    """p(s | x), (K,)."""
    k = world.n_strategies
    if world.prior == "uniform":
        return np.full(k, 1.0 / k)
    scores = [
        math.cos(2 * math.pi * s * x[0] / world.vocab_size) / world.prior_temperature
        for s in range(1, k + 1)
    ]
    weights = np.exp(np.array(scores) - max(scores))
    return weights / weights.sum()


class Reference(NamedTuple):
    """The oracle's quantities by brute force, row-aligned with Enumeration.out."""

    nll_given_s: np.ndarray  # (N, K) from the product formula; inf where s cannot make y
    nll: np.ndarray  # (N,) −log Σ_s p(s|x) p(y|x,s)
    posterior: np.ndarray  # (N, K) Bayes' rule; NaN where y is impossible
    info: np.ndarray  # (N,) KL(posterior ‖ prior)
    token_surprisal: np.ndarray  # (N, T) from the prefix marginals of p(· | x), 0 past EOS
    token_info: np.ndarray  # (N, T) b*_t − E_posterior[−log p(y_t | x, s, t)], 0 past EOS


def _prefix_codes(ys: list[tuple[int, ...]], vocab_size: int, width: int) -> np.ndarray:
    """code[j, t]: y_j's first t tokens as one base-V integer, −1 where y_j is shorter than t,
    (n_y, width)."""
    codes = np.full((len(ys), width), -1, dtype=np.int64)
    for j, y in enumerate(ys):
        code = 0
        for t in range(len(y) + 1):
            codes[j, t] = code
            if t < len(y):
                code = code * vocab_size + y[t]
    return codes


def brute_force(enum: Enumeration) -> Reference:
    """Every quantity of the oracle for every (x, y) of `enum`, from the definitions: p(y|x,s) as
    the product over slots of (1 − ε_t)·1{y_t = f_t} + ε_t/V with EOS at |f|, p(y|x) as the
    prior-weighted sum, b*_t as −log P(y_≤t | x) / P(y_<t | x) summed over every y."""
    world, ys = enum.world, enum.ys
    v, k, width = world.vocab_size, world.n_strategies, world.max_y_len + 1
    n_y = len(ys)
    y_len = np.array([len(y) for y in ys])
    y_arr, _ = pad_rows(ys, world.max_y_len, -1)
    slot = np.arange(world.max_y_len)
    eps = np.array([reference_slot_noise(world, t) for t in slot])  # (Ly,)
    codes = _prefix_codes(ys, v, width)
    shape = (len(enum.xs), n_y)
    nll_given_s = np.zeros((*shape, k))
    nll, info = np.zeros(shape), np.zeros(shape)
    posterior = np.zeros((*shape, k))
    surprisal, token_info = np.zeros((*shape, width)), np.zeros((*shape, width))
    for i, x in enumerate(enum.xs):
        prior = reference_prior(world, x)
        token_p = np.ones((k, n_y, width))  # p(y_t | x, s, t); 1 at EOS and past it
        lik = np.zeros((k, n_y))
        for s, name in enumerate(world.transforms):
            f = reference_output(world, name, x)
            same = y_len == len(f)
            f_row = np.array(f + [-1] * (world.max_y_len - len(f)))
            kept = (1 - eps) * (y_arr == f_row) + eps / v
            token_p[s, :, :-1] = np.where(slot < len(f), kept, 1.0)
            lik[s] = np.where(same, token_p[s].prod(axis=1), 0.0)
        p_y = prior @ lik  # (n_y,)
        with np.errstate(divide="ignore", invalid="ignore"):
            nll_given_s[i] = -np.log(lik.T)
            nll[i] = -np.log(p_y)
            post = (prior[:, None] * lik / p_y).T  # (n_y, K)
            posterior[i] = post
            info[i] = np.where(post > 0, post * np.log(post / prior), 0.0).sum(axis=1)
        # prefix marginals P(y'_<t = y_<t | x) for t = 0..|y|, then p(y | x) for the EOS step
        marginals = np.zeros((n_y, width + 1))
        for t in range(width):
            long_enough = y_len >= t
            mass = np.bincount(codes[long_enough, t], weights=p_y[long_enough], minlength=v**t)
            marginals[long_enough, t] = mass[codes[long_enough, t]]
        marginals[np.arange(n_y), y_len + 1] = p_y
        mask = np.arange(width)[None, :] <= y_len[:, None]
        with np.errstate(divide="ignore", invalid="ignore"):
            steps = np.log(marginals[:, :-1]) - np.log(marginals[:, 1:])
            expected = np.where(
                post[:, :, None] > 0, -post[:, :, None] * np.log(token_p.transpose(1, 0, 2)), 0.0
            ).sum(axis=1)
        surprisal[i] = np.where(mask, steps, 0.0)
        token_info[i] = np.where(mask, steps - expected, 0.0)
    rows = len(enum.xs) * n_y
    return Reference(
        nll_given_s=nll_given_s.reshape(rows, k),
        nll=nll.reshape(rows),
        posterior=posterior.reshape(rows, k),
        info=info.reshape(rows),
        token_surprisal=surprisal.reshape(rows, width),
        token_info=token_info.reshape(rows, width),
    )


def max_abs_error(got: np.ndarray, expected: np.ndarray) -> float:
    """The largest |got − expected| where both are finite; inf if the two disagree on which
    entries are infinite."""
    if not np.array_equal(np.isinf(got), np.isinf(expected)):
        return math.inf
    finite = np.isfinite(expected)
    if not finite.any():
        return 0.0
    return float(np.abs(got[finite] - expected[finite]).max())
