"""Tests for the world knobs `data.prefix`, `data.decoy_positions` and `data.decoy_noise`
(docs/method.md#world-knobs): the oracle against brute-force enumeration of tiny worlds, the
sampler against the knob by Monte Carlo, where the strategy information sits, the params that
are refused, and defaults that leave the world as it was."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from brute_force import (
    N_SE,
    TOL,
    Enumeration,
    Reference,
    brute_force,
    enumerate_world,
    make_world,
    max_abs_error,
    pad_rows,
)

from zgain.core.errors import ParamsError
from zgain.params import DataParams, parse_params
from zgain.world.synthetic import World, sample

DROP = ("copy", "reverse", "shift", "drop_first")
DOUBLE = ("rotate", "reverse", "drop_first", "double")
KNOB_WORLDS = {
    "prefix1-drop_first-x_dependent": make_world(DROP, "x_dependent", 0.2, prefix=1),
    "prefix2-drop_first-uniform": make_world(DROP, "uniform", 0.2, prefix=2),
    "prefix1-double-x_dependent": make_world(DOUBLE, "x_dependent", 0.1, prefix=1),
    "decoy1-drop_first-x_dependent": make_world(
        DROP, "x_dependent", 0.1, decoy_positions=(1,), decoy_noise=0.5
    ),
    "decoy2-double-uniform": make_world(
        DOUBLE, "uniform", 0.1, decoy_positions=(3, 0), decoy_noise=0.6
    ),
    "prefix1-decoy2-drop_first-x_dependent": make_world(
        DROP, "x_dependent", 0.1, prefix=1, decoy_positions=(0, 2), decoy_noise=0.5
    ),
    "prefix2-decoy2-drop_first-uniform": make_world(
        DROP, "uniform", 0.05, prefix=2, decoy_positions=(2, 4), decoy_noise=0.7
    ),
}


@pytest.fixture(scope="module", params=list(KNOB_WORLDS), ids=list(KNOB_WORLDS))
def enumeration(request) -> Enumeration:
    return enumerate_world(KNOB_WORLDS[request.param])


@pytest.fixture(scope="module")
def reference(enumeration: Enumeration) -> Reference:
    return brute_force(enumeration)


# --- the oracle against brute force ---------------------------------------------------------


def test_oracle_matches_brute_force(enumeration: Enumeration, reference: Reference) -> None:
    out, possible = enumeration.out, np.isfinite(reference.nll)
    assert possible.any() and not possible.all()
    errors = {
        "nll_given_s": max_abs_error(out.nll_given_s, reference.nll_given_s),
        "nll": max_abs_error(out.nll, reference.nll),
        **{
            name: max_abs_error(getattr(out, name)[possible], getattr(reference, name)[possible])
            for name in ("posterior", "info", "token_surprisal", "token_info")
        },
    }
    assert max(errors.values()) < TOL, errors


def test_every_x_has_a_distribution_over_y(enumeration: Enumeration) -> None:
    p_y = enumeration.per_x(np.exp(-enumeration.out.nll))  # (n_x, n_y)
    np.testing.assert_allclose(p_y.sum(axis=1), 1.0, rtol=0, atol=TOL)


def test_token_quantities_sum_to_their_totals(enumeration: Enumeration) -> None:
    out = enumeration.out
    possible = np.isfinite(out.nll)
    np.testing.assert_allclose(
        out.token_surprisal.sum(axis=1)[possible], out.nll[possible], rtol=0, atol=TOL
    )
    np.testing.assert_allclose(
        out.token_info.sum(axis=1)[possible], out.info[possible], rtol=0, atol=TOL
    )


def test_the_prefix_carries_no_strategy_information(enumeration: Enumeration) -> None:
    """Every strategy predicts the same prefix tokens, so i*_t = 0 there (t < min(P, L))."""
    world, out = enumeration.world, enumeration.out
    if world.prefix == 0:
        pytest.skip("no prefix")
    x_len = np.repeat([len(x) for x in enumeration.xs], len(enumeration.ys))
    y_len = np.tile([len(y) for y in enumeration.ys], len(enumeration.xs))
    head = np.minimum(world.prefix, x_len)
    possible = np.isfinite(out.nll)
    in_head = (np.arange(out.token_info.shape[1])[None, :] < head[:, None]) & possible[:, None]
    assert in_head.any()
    assert np.abs(out.token_info[in_head]).max() < TOL
    assert (y_len[possible] >= head[possible]).all()


# --- the prefix on a hand example -----------------------------------------------------------


def test_prefix_precedes_every_transform() -> None:
    """prefix 2, x = (0, 1, 2, 3), (4, 2), (1,): y = x[:2] ++ f(x); `shift` moves f only."""
    world = World(5, 1, 4, DROP + ("double",), 2, "uniform", 0.5, 0.0, prefix=2)
    assert world.max_y_len == 2 + 8
    x, x_len = pad_rows([(0, 1, 2, 3), (4, 2), (1,)], world.length_max, world.vocab.pad)
    expected = {
        "copy": [(0, 1, 0, 1, 2, 3), (4, 2, 4, 2), (1, 1)],
        "reverse": [(0, 1, 3, 2, 1, 0), (4, 2, 2, 4), (1, 1)],
        "shift": [(0, 1, 2, 3, 4, 0), (4, 2, 1, 4), (1, 3)],
        "drop_first": [(0, 1, 1, 2, 3), (4, 2, 2), (1,)],
        "double": [(0, 1, 0, 1, 2, 3, 0, 1, 2, 3), (4, 2, 4, 2, 4, 2), (1, 1, 1)],
    }
    for name, rows in expected.items():
        y, y_len = world.apply(name, x, x_len)
        want, want_len = pad_rows(rows, world.max_y_len, world.vocab.pad)
        np.testing.assert_array_equal(y_len, want_len, err_msg=name)
        np.testing.assert_array_equal(y, want, err_msg=name)


def test_prefix_longer_than_every_x_copies_x_whole() -> None:
    world = make_world(DROP, "uniform", 0.1, prefix=7)
    assert world.max_y_len == 3 + 3  # the prefix never holds more than length_max tokens
    x, x_len = pad_rows([(2, 0, 1), (1,)], world.length_max, world.vocab.pad)
    y, y_len = world.apply("reverse", x, x_len)
    want, want_len = pad_rows([(2, 0, 1, 1, 0, 2), (1, 1)], world.max_y_len, world.vocab.pad)
    np.testing.assert_array_equal(y_len, want_len)
    np.testing.assert_array_equal(y, want)


def test_slot_noise_is_decoy_noise_at_decoy_slots() -> None:
    world = make_world(DROP, "uniform", 0.1, decoy_positions=(4, 1, 9), decoy_noise=0.3)
    np.testing.assert_array_equal(world.slot_noise(6), [0.1, 0.3, 0.1, 0.1, 0.3, 0.1])


# --- the sampler ----------------------------------------------------------------------------

MC_N = 50_000
MC_FIELDS = {
    "vocab_size": 4,
    "length_min": 2,
    "length_max": 6,
    "transforms": DROP,
    "shift": 1,
    "prior": "x_dependent",
    "prior_temperature": 0.7,
}


def clean_output(world: World, drawn) -> tuple[np.ndarray, np.ndarray]:
    """The noise-free y of each example's hidden strategy and its length."""
    outputs = [world.apply(name, drawn.x, drawn.x_len) for name in world.transforms]
    rows = np.arange(len(drawn.strategy))
    ys = np.stack([o[0] for o in outputs], axis=1)[rows, drawn.strategy]
    lens = np.stack([o[1] for o in outputs], axis=1)[rows, drawn.strategy]
    return ys, lens


def assert_mismatch_rate(mismatch: np.ndarray, eps: float, v: int, what: str) -> None:
    """A slot replaced with probability eps differs from its clean token at eps·(1 − 1/V)."""
    rate = eps * (1 - 1 / v)
    se = math.sqrt(rate * (1 - rate) / mismatch.size)
    assert abs(mismatch.mean() - rate) < N_SE * se, (what, mismatch.mean(), rate, se)


def test_sampled_prefix_is_x_up_to_noise() -> None:
    world = World(**MC_FIELDS, noise=0.2, prefix=3)
    drawn = sample(world, MC_N, np.random.default_rng(11))
    clean, clean_len = clean_output(world, drawn)
    np.testing.assert_array_equal(drawn.y_len, clean_len)
    p, v = world.prefix, world.vocab_size
    head = np.minimum(p, drawn.x_len)[:, None]  # every x here holds at least 2 tokens
    in_head = np.arange(p)[None, :] < head
    np.testing.assert_array_equal(clean[:, :p][in_head], drawn.x[:, :p][in_head])
    assert_mismatch_rate((drawn.y[:, :p] != drawn.x[:, :p])[in_head], world.noise, v, "prefix")
    t = np.arange(world.max_y_len)[None, :]
    after = (t >= head) & (t < clean_len[:, None])
    assert_mismatch_rate((drawn.y != clean)[after], world.noise, v, "f_s(x)")
    assert (drawn.y[t >= clean_len[:, None]] == world.vocab.pad).all()


def test_sampled_decoy_slots_are_replaced_at_decoy_noise() -> None:
    world = World(**MC_FIELDS, noise=0.05, prefix=1, decoy_positions=(1, 4), decoy_noise=0.6)
    drawn = sample(world, MC_N, np.random.default_rng(12))
    clean, clean_len = clean_output(world, drawn)
    np.testing.assert_array_equal(drawn.y_len, clean_len)
    for t in range(world.max_y_len):
        reached = clean_len > t
        if reached.sum() < 1000:
            continue
        eps = world.decoy_noise if t in world.decoy_positions else world.noise
        mismatch = (drawn.y[:, t] != clean[:, t])[reached]
        assert_mismatch_rate(mismatch, eps, world.vocab_size, f"slot {t}")


# --- where the strategy information sits ----------------------------------------------------

LATE_N = 20_000
DEFAULT_WORLD = {
    "vocab_size": 16,
    "length_min": 2,
    "length_max": 6,
    "transforms": DROP,
    "shift": 1,
    "prior": "x_dependent",
    "prior_temperature": 0.5,
    "noise": 0.02,
}


def first_token_share(world: World, seed: int) -> float:
    """Mean i*_0 over mean I*: the share of the strategy information the first target carries."""
    out = sample(world, LATE_N, np.random.default_rng(seed)).oracle
    return float(out.token_info[:, 0].mean() / out.info.mean())


def test_a_prefix_moves_the_information_off_the_first_target() -> None:
    """The default world puts most of I* on the first target token, where every token weighting
    already presses; a prefix of 3 leaves it none."""
    plain = first_token_share(World(**DEFAULT_WORLD), seed=21)
    late = first_token_share(World(**DEFAULT_WORLD, prefix=3), seed=21)
    figures = f"first-token share of mean I*: prefix 0 {plain:.3f}, prefix 3 {late:.3f}"
    assert plain > 0.5, figures
    assert late <= 0.3, figures


# --- params ---------------------------------------------------------------------------------

PARAM_ERRORS = [
    ({"data.prefix": -1}, "data.prefix: must be >= 0, got -1"),
    ({"data.decoy_positions": [2, -1]}, "data.decoy_positions[1]: must be >= 0, got -1"),
    (
        {"data.decoy_positions": [3, 1, 3], "data.decoy_noise": 0.5},
        "data.decoy_positions: must not repeat a position, got [3, 1, 3]",
    ),
    (
        {"data.decoy_positions": [1]},
        "data.decoy_noise: must be > data.noise (0.02) when data.decoy_positions is set, got 0.0",
    ),
    (
        {"data.decoy_positions": [1], "data.decoy_noise": 0.02},
        "data.decoy_noise: must be > data.noise (0.02) when data.decoy_positions is set, got 0.02",
    ),
    (
        {"data.decoy_positions": [6], "data.decoy_noise": 0.5},
        "data.decoy_positions[0]: must be < the longest y (6 tokens), or no y reaches it, got 6",
    ),
    ({"data.decoy_noise": 1.0}, "data.decoy_noise: must be in [0, 1), got 1.0"),
    ({"data.prefix": 1.0}, "data.prefix: must be an integer, got 1.0"),
]


def with_data(raw: dict, edits: dict[str, object]) -> dict:
    """`raw` with the `data.<key>` entries of `edits` set."""
    for dotted, value in edits.items():
        raw["data"][dotted.removeprefix("data.")] = value
    return raw


@pytest.mark.parametrize(("edits", "message"), PARAM_ERRORS, ids=[m for _, m in PARAM_ERRORS])
def test_bad_knob_names_its_key(default_params_raw: dict, edits: dict, message: str) -> None:
    with pytest.raises(ParamsError, match="^" + re.escape(message) + "$"):
        parse_params(with_data(default_params_raw, edits))


def test_good_knobs_reach_the_world(default_params_raw: dict) -> None:
    edits = {"data.prefix": 2, "data.decoy_positions": [7, 2], "data.decoy_noise": 0.4}
    data = DataParams(**with_data(default_params_raw, edits)["data"])
    world = World.from_params(data)
    assert (world.prefix, world.decoy_positions, world.decoy_noise) == (2, (7, 2), 0.4)
    assert world.max_y_len == 2 + data.length_max
    hash(world)  # still a frozen, hashable value


def test_decoy_noise_is_free_without_decoys(default_params_raw: dict) -> None:
    data = DataParams(**with_data(default_params_raw, {"data.decoy_noise": 0.0})["data"])
    assert data.decoy_noise < data.noise and data.decoy_positions == ()


# --- defaults leave the world as it was -----------------------------------------------------


def test_default_knobs_draw_the_same_sample(tiny_data_params: DataParams) -> None:
    fields = tiny_data_params.model_dump(exclude={"source", "seed", "n_train", "n_val", "n_test"})
    knobs = {"prefix", "decoy_positions", "decoy_noise"}
    assert {key: fields[key] for key in knobs} == {
        "prefix": 0,
        "decoy_positions": (),
        "decoy_noise": 0.0,
    }
    without = World(**{key: value for key, value in fields.items() if key not in knobs})
    explicit = World.from_params(tiny_data_params)
    assert without == explicit
    a = sample(without, 2000, np.random.default_rng(5))
    b = sample(explicit, 2000, np.random.default_rng(5))
    for field in ("x", "x_len", "y", "y_len", "strategy"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field))
    for field in a.oracle._fields:
        np.testing.assert_array_equal(getattr(a.oracle, field), getattr(b.oracle, field))


def test_no_decoys_is_uniform_noise() -> None:
    world = make_world(DROP, "uniform", 0.15, decoy_noise=0.9)
    np.testing.assert_array_equal(world.slot_noise(5), np.full(5, 0.15))
