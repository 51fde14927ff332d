"""zgain.params: the bases (`base.seeds`) and the confirming tier (`cvae.confirm`) that replicates
the contested variants on every base after the first (docs/architecture.md#bases)."""

from __future__ import annotations

import copy
import re

import pytest
from params_edit import DELETE, VARIANTS, edit, edit_all, fails_with

from zgain.core.errors import ParamsError
from zgain.params import BasePaths, parse_params

RATES = "0.25, 0.5, 1.0, 2.0"
GRID = {
    "base.seeds": [0, 1, 2, 3, 4],
    "cvae.confirm.bases": [1, 2, 3, 4],
    "cvae.rates": [0.25, 0.5, 1.0, 2.0],
}
"""A design with five bases and four rates, set before each edit below, so that the messages do
not follow the default's own lists."""


def test_the_default_bases_and_confirming_tier_load(default_params_raw: dict) -> None:
    params = parse_params(default_params_raw)
    seeds = tuple(default_params_raw["base"]["seeds"])
    assert params.base.seeds == seeds and params.base.screening == seeds[0]
    confirm = params.cvae.confirm
    assert confirm.bases == seeds[1:]
    assert set(confirm.variants) <= set(params.cvae.variants)
    assert set(confirm.rates) <= set(params.cvae.rates)


def test_one_base_needs_no_confirming_bases(default_params_raw: dict) -> None:
    edit(default_params_raw, "base.seeds", [7])
    edit(default_params_raw, "cvae.confirm.bases", [])
    params = parse_params(default_params_raw)
    assert params.base.screening == 7 and params.cvae.confirm.bases == ()


BASE_ERRORS = [
    ({"base.seeds": []}, "base.seeds: needs at least one base seed, got []"),
    ({"base.seeds": [0, 0, 1]}, "base.seeds: must not repeat a seed, got [0, 0, 1]"),
    ({"base.seeds": [0, "1"]}, "base.seeds[1]: must be an integer, got '1'"),
    (
        {"cvae.confirm.bases": [1, 2]},
        "cvae.confirm.bases: must list base.seeds after the first, in order ([1, 2, 3, 4]), "
        "got [1, 2]",
    ),
    (
        {"cvae.confirm.bases": [2, 1, 3, 4]},
        "cvae.confirm.bases: must list base.seeds after the first, in order ([1, 2, 3, 4]), "
        "got [2, 1, 3, 4]",
    ),
    (
        {"cvae.confirm.bases": [0, 1, 2, 3, 4]},
        "cvae.confirm.bases: must list base.seeds after the first, in order ([1, 2, 3, 4]), "
        "got [0, 1, 2, 3, 4]",
    ),
    (
        {"base.seeds": [0, 1, 2, 3, 4, 5]},
        "cvae.confirm.bases: must list base.seeds after the first, in order ([1, 2, 3, 4, 5]), "
        "got [1, 2, 3, 4]",
    ),
    (
        {"cvae.confirm.variants": ["token_mean", "nope"]},
        f"cvae.confirm.variants: must name keys of variants ({VARIANTS}), got 'nope'",
    ),
    (
        {"cvae.confirm.rates": [3.0]},
        f"cvae.confirm.rates: must be entries of rates ({RATES}), got 3.0",
    ),
    (
        {"cvae.confirm.rates": [1]},
        "cvae.confirm.rates[0]: must be written as a decimal (1.0, not 1), got 1",
    ),
    ({"cvae.confirm.seeds": []}, "cvae.confirm.seeds: needs at least one entry, got []"),
    ({"cvae.confirm.variants": []}, "cvae.confirm.variants: needs at least one entry, got []"),
    ({"cvae.confirm.rates": []}, "cvae.confirm.rates: needs at least one entry, got []"),
    ({"cvae.confirm.seeds": [0, 0]}, "cvae.confirm.seeds: must not repeat an entry, got [0, 0]"),
    (
        {"cvae.confirm.variants": ["token_mean", "token_mean"]},
        "cvae.confirm.variants: must not repeat an entry, got ['token_mean', 'token_mean']",
    ),
    (
        {"cvae.confirm.bases": [1, 1]},
        "cvae.confirm.bases: must not repeat an entry, got [1, 1]",
    ),
    ({"cvae.confirm": DELETE}, "cvae.confirm: missing required key"),
]


@pytest.mark.parametrize(("edits", "message"), BASE_ERRORS, ids=[m for _, m in BASE_ERRORS])
def test_a_bad_base_or_confirming_tier_names_the_key(
    default_params_raw: dict, edits: dict, message: str
) -> None:
    fails_with(edit_all(edit_all(default_params_raw, copy.deepcopy(GRID)), edits), message)


def test_the_old_single_base_seed_is_named_as_unknown(default_params_raw: dict) -> None:
    edit(default_params_raw, "base.seeds", DELETE)
    edit(default_params_raw, "base.seed", 0)
    fails_with(
        default_params_raw,
        "base.seeds: missing required key\nbase.seed: unknown key (known: ",
        whole=False,
    )


def test_base_lookup_returns_the_listed_seed_or_names_the_list(default_params_raw: dict) -> None:
    params = parse_params(edit_all(default_params_raw, copy.deepcopy(GRID)))
    assert params.base.seed(3) == 3
    with pytest.raises(
        ParamsError, match="^" + re.escape("base.seeds: no base 7 (listed: 0, 1, 2, 3, 4)") + "$"
    ):
        params.base.seed(7)


def test_each_base_has_its_own_files(default_params_raw: dict) -> None:
    paths = parse_params(default_params_raw).paths
    assert paths.base(3) == BasePaths(
        seed=3,
        base_model=f"{paths.bases_dir}/3/base.pt",
        base_meta=f"{paths.bases_dir}/3/base.json",
        base_live=f"{paths.base_live}/3",
        surprisal_dir=f"{paths.surprisal_dir}/3",
        normalizer=f"{paths.normalizer_dir}/3.json",
    )
    files = [
        getattr(paths.base(b), key)
        for b in (0, 1)
        for key in ("base_model", "base_meta", "base_live", "surprisal_dir", "normalizer")
    ]
    assert len(set(files)) == len(files)
