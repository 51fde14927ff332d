"""The synthetic world with known ground truth and its exact oracle.

x is a variable-length sequence of content tokens; a hidden strategy s ~ p(s | x) picks one of
K deterministic transforms f_s; y = x[:min(prefix, L)] ++ f_s(x), a prefix every strategy shares
(none by default) then the transform, with each token independently replaced by a uniform
content token with probability ε_t: `decoy_noise` at the decoy slots, `noise` elsewhere.
Everything is vectorized over examples with numpy; the only Python loops run over the K
strategies.

Frames: a batch of y is (N, Ly) right-padded; the supervised frame has T = Ly + 1 slots, the y
tokens then EOS (position y_len), so a sequence with n tokens has n + 1 supervised positions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, NamedTuple

import numpy as np

from zgain.core.vocab import Vocab
from zgain.params import DataParams
from zgain.world import portable
from zgain.world.frames import Frames
from zgain.world.transforms import TRANSFORMS, IntArray, longest_y


@dataclass(frozen=True)
class World:
    """The generative process p(s | x) p(y | x, s) (docs/method.md#the-synthetic-world)."""

    vocab_size: int
    length_min: int
    length_max: int
    transforms: tuple[str, ...]
    shift: int
    prior: Literal["uniform", "x_dependent"]
    prior_temperature: float
    noise: float
    prefix: int = 0  # y starts with the first min(prefix, L) tokens of x, shared by every s
    decoy_positions: tuple[int, ...] = ()  # y slots replaced with probability decoy_noise
    decoy_noise: float = 0.0

    @property
    def n_strategies(self) -> int:
        return len(self.transforms)

    @classmethod
    def from_params(cls, data: DataParams) -> World:
        """The world that `data` describes (its generator seed and split sizes aside)."""
        return cls(**data.model_dump(exclude={"source", "seed", "n_train", "n_val", "n_test"}))

    @property
    def frames(self) -> Frames:
        """The models' frames for this world (zgain.world.frames)."""
        return Frames(self.vocab_size, self.max_x_len, self.max_y_len)

    @property
    def vocab(self) -> Vocab:
        return self.frames.vocab

    @property
    def max_x_len(self) -> int:
        """X: x is left-padded to this frame."""
        return self.length_max

    @property
    def n_targets(self) -> int:
        return self.frames.n_targets

    @property
    def max_len(self) -> int:
        return self.frames.max_len

    @property
    def max_y_len(self) -> int:
        return longest_y(self.transforms, self.length_max, self.prefix)

    def slot_noise(self, width: int) -> np.ndarray:
        """ε_t for the target slots t = 0..width−1: `decoy_noise` at the decoy slots, `noise`
        elsewhere, (width,)."""
        eps = np.full(width, self.noise)
        for t in self.decoy_positions:
            if t < width:
                eps[t] = self.decoy_noise
        return eps

    def log_prior(self, x: IntArray, x_len: IntArray) -> np.ndarray:
        """log p(s | x), (N, K).

        `x_dependent` scores strategy s by cos(2π (s+1) x_0 / V) / temperature, a fixed periodic
        function of the first token: x_0 = 0 gives a uniform prior, other first tokens favour
        different strategies with different confidence, so H(S | x) varies across examples.
        """
        n = x.shape[0]
        k = self.n_strategies
        if self.prior == "uniform":
            return np.full((n, k), -portable.log(float(k)))
        s = np.arange(1, k + 1)[None, :]  # (1, K)
        logits = portable.cos_turns(s * x[:, :1], self.vocab_size) / self.prior_temperature
        return logits - portable.logsumexp(logits, axis=1, keepdims=True)

    def apply(self, name: str, x: IntArray, x_len: IntArray) -> tuple[IntArray, IntArray]:
        """y = x[:min(prefix, L)] ++ f_name(x) without noise: (N, max_y_len) right-padded with
        PAD, and y_len (N,). The prefix copies x verbatim (`shift` moves only the f_name part)."""
        index_map, shifted = TRANSFORMS[name]
        t = np.arange(self.max_y_len)[None, :]  # (1, Ly)
        head = np.minimum(self.prefix, x_len)[:, None]  # (N, 1) tokens of the shared prefix
        src, f_len = index_map(t - head, x_len[:, None])
        y_len = (head + f_len)[:, 0]
        in_head = t < head
        valid = t < y_len[:, None]
        src = np.clip(np.where(in_head, t, src), 0, x.shape[1] - 1)
        y = np.take_along_axis(x, np.broadcast_to(src, valid.shape), axis=1)
        if shifted:
            y = np.where(in_head, y, (y + self.shift) % self.vocab_size)
        return np.where(valid, y, self.vocab.pad), y_len


class Oracle(NamedTuple):
    """Exact per-example and per-token quantities of the world (all in nats)."""

    log_prior: np.ndarray  # (N, K) log p(s | x)
    posterior: np.ndarray  # (N, K) p(s | x, y)
    nll_given_s: np.ndarray  # (N, K) −log p(y | x, s) (inf where s cannot produce y)
    nll: np.ndarray  # (N,) −log p(y | x)
    nll_given_s_mean: np.ndarray  # (N,) E_{p(s|x,y)}[−log p(y | x, s)]
    info: np.ndarray  # (N,) I* = KL(p(s|x,y) ‖ p(s|x)) = nll − nll_given_s_mean
    prior_entropy: np.ndarray  # (N,) H(S | x)
    token_surprisal: np.ndarray  # (N, T) b*_t, 0 past EOS; sums to nll
    token_info: np.ndarray  # (N, T) b*_t − E_{p(s|x,y)}[−log p(y_t | x, s, t)]; sums to info
    mask: np.ndarray  # (N, T) bool, True on the y tokens and EOS


def targets_frame(y: IntArray, y_len: IntArray, eos: int, pad: int) -> IntArray:
    """The supervised targets (N, Ly + 1): y tokens, EOS at y_len, PAD after."""
    n, ly = y.shape
    t = np.arange(ly + 1)[None, :]
    padded = np.concatenate([y, np.full((n, 1), pad, dtype=y.dtype)], axis=1)
    out = np.where(t < y_len[:, None], padded, pad)
    return np.where(t == y_len[:, None], eos, out)


def _token_log_prob(world: World, name: str, x, x_len, targets, y_len) -> np.ndarray:
    """log p(y_t | x, s, t) for one strategy, (N, T); 0 past the observed EOS. A content slot
    keeps f_t with probability 1 − ε_t + ε_t/V (ε_t = World.slot_noise); EOS is never noised."""
    f, f_len = world.apply(name, x, x_len)
    n, width = targets.shape
    f = np.concatenate([f, np.full((n, 1), world.vocab.pad)], axis=1)[:, :width]
    if f.shape[1] < width:
        f = np.concatenate([f, np.full((n, width - f.shape[1]), world.vocab.pad)], axis=1)
    t = np.arange(width)[None, :]
    v = world.vocab_size
    eps = world.slot_noise(width)[None, :]  # (1, T)
    content = (1.0 - eps) * (targets == f) + eps / v
    prob = np.where(
        t < f_len[:, None],
        np.where(t < y_len[:, None], content, 0.0),  # s expects a token: EOS has probability 0
        np.where(t == f_len[:, None], (t == y_len[:, None]).astype(float), 0.0),  # s expects EOS
    )
    with np.errstate(divide="ignore"):
        logp = portable.log(prob)
    return np.where(t <= y_len[:, None], logp, 0.0)


def oracle(world: World, x: IntArray, x_len: IntArray, y: IntArray, y_len: IntArray) -> Oracle:
    """Exact p(y|x), p(s|x,y), I* and the forward-filtered b*_t for each example."""
    targets = targets_frame(y, y_len, world.vocab.eos, world.vocab.pad)
    mask = np.arange(targets.shape[1])[None, :] <= y_len[:, None]
    log_prior = world.log_prior(x, x_len)  # (N, K)
    logp = np.stack(
        [_token_log_prob(world, name, x, x_len, targets, y_len) for name in world.transforms],
        axis=1,
    )  # (N, K, T)
    with np.errstate(invalid="ignore", divide="ignore"):
        # forward filtering: joint of s and y_<t before each position t
        exclusive = np.concatenate(
            [np.zeros_like(logp[:, :, :1]), np.cumsum(logp, axis=2)[:, :, :-1]], axis=2
        )
        before = log_prior[:, :, None] + exclusive  # (N, K, T)
        token_surprisal = portable.logsumexp(before, axis=1) - portable.logsumexp(
            before + logp, axis=1
        )
        nll_given_s = -logp.sum(axis=2)  # (N, K)
        log_joint = log_prior - nll_given_s
        nll = -portable.logsumexp(log_joint, axis=1)
        posterior = portable.exp(log_joint + nll[:, None])
        weighted = np.where(posterior > 0, posterior * nll_given_s, 0.0)
        token_weighted = np.where(posterior[:, :, None] > 0, -posterior[:, :, None] * logp, 0.0)
    nll_given_s_mean = weighted.sum(axis=1)
    prior_probs = portable.exp(log_prior)
    prior_entropy = -(prior_probs * log_prior).sum(axis=1)
    token_surprisal = np.where(mask, token_surprisal, 0.0)
    token_info = np.where(mask, token_surprisal - token_weighted.sum(axis=1), 0.0)
    return Oracle(
        log_prior=log_prior,
        posterior=posterior,
        nll_given_s=nll_given_s,
        nll=nll,
        nll_given_s_mean=nll_given_s_mean,
        info=nll - nll_given_s_mean,
        prior_entropy=prior_entropy,
        token_surprisal=token_surprisal,
        token_info=token_info,
        mask=mask,
    )


class Sample(NamedTuple):
    """One split of the world: padded token arrays, the hidden strategy and the oracle."""

    x: IntArray  # (N, length_max) right-padded with PAD
    x_len: IntArray  # (N,)
    y: IntArray  # (N, max_y_len) right-padded with PAD
    y_len: IntArray  # (N,)
    strategy: IntArray  # (N,)
    oracle: Oracle


def sample(world: World, n: int, rng: np.random.Generator) -> Sample:
    """Draw n examples: x, s ~ p(s|x), y = noisy prefix ++ f_s(x); then the exact oracle of each."""
    x_len = rng.integers(world.length_min, world.length_max + 1, size=n)
    x = rng.integers(0, world.vocab_size, size=(n, world.length_max))
    x = np.where(np.arange(world.length_max)[None, :] < x_len[:, None], x, world.vocab.pad)
    prior = portable.exp(world.log_prior(x, x_len))
    u = rng.random(n)[:, None]
    strategy = np.minimum((np.cumsum(prior, axis=1) < u).sum(axis=1), world.n_strategies - 1)
    outputs = [world.apply(name, x, x_len) for name in world.transforms]
    ys = np.stack([o[0] for o in outputs], axis=1)  # (N, K, Ly)
    lens = np.stack([o[1] for o in outputs], axis=1)  # (N, K)
    rows = np.arange(n)
    y, y_len = ys[rows, strategy], lens[rows, strategy]
    replaced = rng.random(y.shape) < world.slot_noise(y.shape[1])[None, :]
    noise_tokens = rng.integers(0, world.vocab_size, size=y.shape)
    valid = np.arange(y.shape[1])[None, :] < y_len[:, None]
    y = np.where(replaced & valid, noise_tokens, y)
    return Sample(x, x_len, y, y_len, strategy, oracle(world, x, x_len, y, y_len))
