"""zgain.params: a value out of its range, or of the range another value sets, names its key path
and the value found."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest
import yaml
from params_edit import (
    DEFAULT_LENGTH_MAX,
    DELETE,
    REPO_PARAMS,
    TRANSFORM_NAMES,
    VARIANTS,
    edit,
    edit_all,
    error_lines,
    fails_with,
)

from zgain.core.errors import ParamsError
from zgain.params import parse_params

# --- range checks: the exact message format ----------------------------------------------------

RANGE_ERRORS = [
    ("data.noise", 1.5, "data.noise: must be in [0, 1), got 1.5"),
    ("data.noise", 1.0, "data.noise: must be in [0, 1), got 1.0"),
    ("data.noise", -0.1, "data.noise: must be in [0, 1), got -0.1"),
    ("data.prior_temperature", 0.0, "data.prior_temperature: must be > 0, got 0.0"),
    ("data.length_min", 0, "data.length_min: must be >= 1, got 0"),
    (
        "data.length_min",
        99,
        f"data.length_min: must be <= data.length_max ({DEFAULT_LENGTH_MAX}), got 99",
    ),
    ("data.transforms", ["copy"], "data.transforms: needs at least 2 strategies (K >= 2), got 1"),
    (
        "data.transforms",
        ["copy", "flip"],
        f"data.transforms[1]: must be one of {TRANSFORM_NAMES}, got 'flip'",
    ),
    (
        "data.transforms",
        ["copy", "reverse", "copy"],
        "data.transforms: must not repeat a transform, got ['copy', 'reverse', 'copy']",
    ),
    ("data.shift", 0, "data.shift: must be nonzero (0 makes `shift` a copy), got 0"),
    ("data.shift", 16, "data.vocab_size: must be >= 17 for these transforms, got 16"),
    ("data.shift", -16, "data.vocab_size: must be >= 17 for these transforms, got 16"),
    ("data.vocab_size", 1, "data.vocab_size: must be >= 2 for these transforms, got 1"),
    ("data.n_train", 0, "data.n_train: must be > 0, got 0"),
    ("data.n_val", -5, "data.n_val: must be > 0, got -5"),
    ("data.n_test", 0, "data.n_test: must be > 0, got 0"),
    ("base.batch_size", 0, "base.batch_size: must be > 0, got 0"),
    ("base.model.n_heads", 3, "base.model.n_heads: must divide d_model (64), got 3"),
    ("base.model.dropout", 1.0, "base.model.dropout: must be in [0, 1), got 1.0"),
    (
        "cvae.common.model.encoder_heads",
        5,
        "cvae.common.model.encoder_heads: must divide encoder_d_model (64), got 5",
    ),
    ("surprisal.batch_size", 0, "surprisal.batch_size: must be > 0, got 0"),
    ("cvae.common.model.latent_dim", 0, "cvae.common.model.latent_dim: must be > 0, got 0"),
    ("cvae.common.steps", -1, "cvae.common.steps: must be > 0, got -1"),
    ("cvae.common.beta", -0.1, "cvae.common.beta: must be >= 0, got -0.1"),
    ("cvae.common.eps", 0.0, "cvae.common.eps: must be > 0, got 0.0"),
    ("cvae.common.eps", 0, "cvae.common.eps: must be > 0, got 0.0"),
    ("cvae.common.eps", -0.001, "cvae.common.eps: must be > 0, got -0.001"),
    ("cvae.common.free_bits", -1.0, "cvae.common.free_bits: must be >= 0, got -1.0"),
    ("cvae.seeds", [], "cvae.seeds: needs at least one seed, got []"),
    ("cvae.seeds", [0, 0], "cvae.seeds: must not repeat a seed, got [0, 0]"),
    (
        "cvae.variants.token_mean.weights",
        {"mean": 0.0, "sum": 0.0},
        "cvae.variants.token_mean.weights: needs at least one positive weight, "
        "got {'mean': 0.0, 'sum': 0.0}",
    ),
    (
        "cvae.variants.token_mean.weights",
        {},
        "cvae.variants.token_mean.weights: needs at least one positive weight, got {}",
    ),
    (
        "cvae.variants.token_mean.weights",
        {"mean": 1.0, "sum": -0.5},
        "cvae.variants.token_mean.weights.sum: must be >= 0, got -0.5",
    ),
    ("cvae.variants.token_sum.beta", -1, "cvae.variants.token_sum.beta: must be >= 0, got -1.0"),
    (
        "cvae.variants.token_sum.free_bits",
        -0.5,
        "cvae.variants.token_sum.free_bits: must be >= 0, got -0.5",
    ),
    ("evaluate.iw_samples", 0, "evaluate.iw_samples: must be even and >= 2, got 0"),
    ("evaluate.iw_samples", 7, "evaluate.iw_samples: must be even and >= 2, got 7"),
    (
        "evaluate.probe_test_fraction",
        1.0,
        "evaluate.probe_test_fraction: must be in (0, 1), got 1.0",
    ),
    ("report.confidence", 1.0, "report.confidence: must be in (0, 1), got 1.0"),
    (
        "report.equivalence.capture",
        0.0,
        "report.equivalence.capture: must be > 0, got 0.0",
    ),
    (
        "report.baseline_variant",
        "nope",
        f"report.baseline_variant: must name a variant in cvae.variants ({VARIANTS}), got 'nope'",
    ),
    (
        "report.pairs",
        [["token_mean", "nope"]],
        f"report.pairs: must name variants in cvae.variants ({VARIANTS}), "
        "got ['token_mean', 'nope']",
    ),
    (
        "report.pairs",
        [["token_mean", "token_mean"]],
        "report.pairs: must compare two different variants, got ['token_mean', 'token_mean']",
    ),
]


@pytest.mark.parametrize(
    ("key", "value", "message"), RANGE_ERRORS, ids=[e[2] for e in RANGE_ERRORS]
)
def test_out_of_range_value_names_key_and_value(
    default_params_raw: dict, key: str, value: Any, message: str
) -> None:
    fails_with(edit(default_params_raw, key, value), message)


def test_no_variants_is_an_error(default_params_raw: dict) -> None:
    """cvae.confirm.variants then names keys of an empty mapping too: each is its own line."""
    lines = error_lines(edit(default_params_raw, "cvae.variants", {}))
    assert "cvae.variants: needs at least one variant, got {}" in lines
    confirm = default_params_raw["cvae"]["confirm"]["variants"]
    assert [line for line in lines if line.startswith("cvae.confirm.variants")] == [
        f"cvae.confirm.variants: must name keys of variants (), got {name!r}" for name in confirm
    ]


def test_baseline_removed_from_variants_is_an_error(default_params_raw: dict) -> None:
    edit(default_params_raw, "cvae.variants.token_mean", DELETE)
    confirm = default_params_raw["cvae"]["confirm"]
    confirm["variants"] = [v for v in confirm["variants"] if v != "token_mean"]
    remaining = VARIANTS.removeprefix("token_mean, ")
    fails_with(
        default_params_raw,
        f"report.baseline_variant: must name a variant in cvae.variants ({remaining}), "
        "got 'token_mean'",
    )


UNNAMED = "example_inverse"  # a variant neither cvae.confirm nor report names

NAME_RULE = "a variant name must be letters, digits, `_` or `-`, first a letter or digit"


@pytest.mark.parametrize("name", ["token mean", "a;rm -rf x", "x'y", "$(id)", "-v", "ü", "a.b"])
def test_a_variant_name_that_is_not_identifier_like_is_an_error(
    default_params_raw: dict, name: str
) -> None:
    variants = default_params_raw["cvae"]["variants"]
    variants[name] = variants.pop(UNNAMED)
    fails_with(default_params_raw, f"cvae.variants.{name}: {NAME_RULE}, got {name!r}")


@pytest.mark.parametrize("name", ["token_sum", "v2", "beta-0_5", "A-b_9"])
def test_identifier_like_variant_names_load(default_params_raw: dict, name: str) -> None:
    variants = default_params_raw["cvae"]["variants"]
    variants[name] = variants.pop(UNNAMED)
    assert name in parse_params(default_params_raw).cvae.variants


# --- values whose valid range depends on another value ----------------------------------------

# The default world: 4 strategies, n_test 2000, n_val 2000, n_train 200000.
CROSS_ERRORS = [
    (
        {"evaluate.probe_test_fraction": 0.001},
        "evaluate.probe_test_fraction: must leave at least one example per strategy (4) in both "
        "parts of the probe's split of data.n_test (2000): ceil(2000 × fraction) is 2, got 0.001",
    ),
    (
        {"evaluate.probe_test_fraction": 0.999},
        "evaluate.probe_test_fraction: must leave at least one example per strategy (4) in both "
        "parts of the probe's split of data.n_test (2000): ceil(2000 × fraction) is 1998, "
        "got 0.999",
    ),
    (
        {"data.n_test": 10, "evaluate.probe_test_fraction": 0.3},
        "evaluate.probe_test_fraction: must leave at least one example per strategy (4) in both "
        "parts of the probe's split of data.n_test (10): ceil(10 × fraction) is 3, got 0.3",
    ),
    (
        {"cvae.common.val_examples": 2001},
        "cvae.common.val_examples: must be <= data.n_val (2000), got 2001",
    ),
    ({"data.n_train": 200}, "base.batch_size: must be <= data.n_train (200), got 256"),
    (
        {"cvae.common.batch_size": 200001},
        "cvae.common.batch_size: must be <= data.n_train (200000), got 200001",
    ),
    (
        {"cvae.common.warmup_steps": 401},
        "cvae.common.warmup_steps: must be <= cvae.common.steps (400), got 401",
    ),
    (
        {"cvae.common.lr_warmup_steps": 401},
        "cvae.common.lr_warmup_steps: must be <= cvae.common.steps (400), got 401",
    ),
    (
        {"cvae.confirm.steps": 100, "cvae.common.warmup_steps": 150},
        "cvae.common.warmup_steps: must be <= cvae.confirm.steps (100), got 150",
    ),
    ({"cvae.confirm.steps": 0}, "cvae.confirm.steps: must be > 0, got 0"),
]


@pytest.mark.parametrize(("edits", "message"), CROSS_ERRORS, ids=[m for _, m in CROSS_ERRORS])
def test_a_value_out_of_the_range_another_sets_names_both(
    default_params_raw: dict, edits: dict, message: str
) -> None:
    fails_with(edit_all(default_params_raw, edits), message)


def test_cross_checks_report_every_problem_at_once(default_params_raw: dict) -> None:
    edit(default_params_raw, "data.n_train", 100)
    edit(default_params_raw, "cvae.common.val_examples", 5000)
    with pytest.raises(ParamsError) as caught:
        parse_params(default_params_raw)
    assert [line.split(":")[0] for line in caught.value.lines] == [
        "base.batch_size",
        "cvae.common.batch_size",
        "cvae.common.val_examples",
    ]


@pytest.mark.parametrize(("n_test", "n_classes"), [(2000, 4), (120, 4), (37, 5)])
def test_the_probe_fraction_bounds_are_exactly_where_the_probe_split_works(
    n_test: int, n_classes: int
) -> None:
    """The smallest and largest accepted fractions split; just beyond them scikit-learn refuses."""
    from zgain.evaluate.estimators import probe_split

    labels = np.arange(n_test) % n_classes
    raw = yaml.safe_load(REPO_PARAMS.read_text())
    transforms = ["copy", "reverse", "shift", "drop_first", "rotate"][:n_classes]
    edit(raw, "data.transforms", transforms)
    edit(raw, "data.n_test", n_test)

    def accepted(fraction: float) -> bool:
        edit(raw, "evaluate.probe_test_fraction", fraction)
        try:
            parse_params(raw)
        except ParamsError:
            return False
        return True

    low = (n_classes - 1) / n_test + 1e-9  # ceil(n_test × low) = n_classes
    high = (n_test - n_classes) / n_test  # leaves exactly n_classes for the probe's training
    for fraction in (low, high):
        assert accepted(fraction)
        train, test = probe_split(labels, seed=0, test_fraction=fraction)
        assert len(np.unique(labels[train])) == len(np.unique(labels[test])) == n_classes
    for fraction in ((n_classes - 1) / n_test, high + 1 / n_test):
        assert not accepted(fraction)
        with pytest.raises(ValueError):
            probe_split(labels, seed=0, test_fraction=fraction)


def test_unknown_variant_lookup_names_it(default_params_raw: dict) -> None:
    params = parse_params(default_params_raw)
    with pytest.raises(ParamsError, match="^" + re.escape("cvae.variants.nope: no such variant")):
        params.cvae.variant("nope")


# --- target rates ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rates", "message"),
    [
        ([1], "cvae.rates[0]: must be written as a decimal (1.0, not 1), got 1"),
        ([-0.5], "cvae.rates[0]: must be > 0, got -0.5"),
    ],
)
def test_bad_rates_name_the_problem(default_params_raw: dict, rates: list, message: str) -> None:
    fails_with(edit(default_params_raw, "cvae.rates", rates), message)


@pytest.mark.parametrize(
    ("rates", "message"),
    [
        ([], "cvae.rates: needs at least one rate, got []"),
        ([0.5, 0.5], "cvae.rates: must not repeat a rate, got [0.5, 0.5]"),
    ],
)
def test_a_bad_rate_list_is_named_beside_the_confirming_rates_it_drops(
    default_params_raw: dict, rates: list, message: str
) -> None:
    """cvae.confirm.rates (1.0) is then no entry of cvae.rates either: both lines."""
    known = ", ".join(map(repr, rates))
    assert error_lines(edit(default_params_raw, "cvae.rates", rates)) == [
        f"cvae.confirm.rates: must be entries of rates ({known}), got 1.0",
        message,
    ]


def test_a_fixed_beta_schedule_takes_one_rate(default_params_raw: dict) -> None:
    raw = edit(default_params_raw, "cvae.common.beta_schedule", "linear")
    fails_with(
        edit(raw, "cvae.rates", [0.5, 1.0]),
        "cvae.rates: a fixed β schedule (linear) targets no rate: give one entry, which only "
        "names the runs' files, got [0.5, 1.0]",
    )
    raw = edit(edit(raw, "cvae.rates", [0.5]), "cvae.confirm.rates", [0.5])
    params = parse_params(raw)
    assert params.cvae.rates == params.cvae.confirm.rates == (0.5,)


def test_rate_target_bounds_must_be_ordered(default_params_raw: dict) -> None:
    raw = edit(default_params_raw, "cvae.common.rate_target.beta_min", 20.0)
    fails_with(raw, "cvae.common.rate_target.beta_max: must exceed beta_min (20.0), got 10.0")


def test_rate_target_initial_beta_must_lie_within_its_bounds(default_params_raw: dict) -> None:
    raw = edit(default_params_raw, "cvae.common.rate_target.beta_init", 20.0)
    fails_with(
        raw,
        "cvae.common.rate_target.beta_init: must lie in [beta_min, beta_max] = [1e-06, 10.0], "
        "got 20.0",
    )


def test_rate_target_warmup_cannot_outlast_training(default_params_raw: dict) -> None:
    raw = edit(default_params_raw, "cvae.common.rate_target.warmup_steps", 401)
    fails_with(
        raw, "cvae.common.rate_target.warmup_steps: must be <= cvae.common.steps (400), got 401"
    )


def test_a_variant_without_beta_starts_from_the_schedules_own_default(
    default_params_raw: dict,
) -> None:
    """Under rate_target a variant's β is the controller's start, rate_target.beta_init; under a
    fixed schedule it is cvae.common.beta; a variant's own beta overrides either."""
    raw = edit(default_params_raw, "cvae.common.rate_target.beta_init", 0.03)
    raw = edit(raw, "cvae.variants.token_sum.beta", 0.5)
    targeted = parse_params(raw).cvae
    assert targeted.variant("token_mean").beta == 0.03
    assert targeted.variant("token_sum").beta == 0.5
    raw = edit(edit(raw, "cvae.common.beta_schedule", "constant"), "cvae.rates", [1.0])
    fixed = parse_params(raw).cvae
    assert fixed.variant("token_mean").beta == fixed.common.beta == 0.2
    assert fixed.variant("token_sum").beta == 0.5


def test_rate_lookup_returns_the_listed_rate_or_names_the_list(default_params_raw: dict) -> None:
    params = parse_params(edit(default_params_raw, "cvae.rates", [0.25, 0.5, 1.0, 2.0]))
    assert params.cvae.rate(1.0) == 1.0
    with pytest.raises(
        ParamsError, match=re.escape("cvae.rates: no rate 0.3 (listed: 0.25, 0.5, 1.0, 2.0)")
    ):
        params.cvae.rate(0.3)
