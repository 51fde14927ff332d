"""The studies' params: the worlds and remedies studies' `dvc exp run` settings on the default
params, and the one-base cut (bench.common.screening_only) a project trained outside the DAG
takes."""

from __future__ import annotations

from pathlib import Path

import yaml

from bench.common import merge, raw_params
from studies.remedies.remedies import REMEDIES, study_params
from studies.remedies.remedies import WORLDS as REMEDY_WORLDS
from studies.worlds.worlds import DESIGN, WORLDS, apply_settings
from zgain.params import parse_params
from zgain.world.synthetic import World


def test_screening_only_keeps_the_first_base_and_a_confirming_tier_the_grid_lists() -> None:
    """The benches train screening groups alone, often on a grid cut to one rate or variant:
    their params keep one base and cut cvae.confirm to what the grid lists."""
    from bench.common import screening_only

    raw = raw_params()
    cut = merge(raw, {"cvae": {"rates": [0.5], "variants": {"mean_tok": {"weights": {"x": 1}}}}})
    one = screening_only(cut)
    assert one["base"]["seeds"] == raw["base"]["seeds"][:1]
    assert one["cvae"]["confirm"] == {
        **raw["cvae"]["confirm"],
        "bases": [],
        "variants": ["mean_tok"],
        "rates": [0.5],  # none of the confirming rates is left: the grid's first
    }
    kept = screening_only(raw)["cvae"]["confirm"]
    assert (kept["variants"], kept["rates"]) == (
        raw["cvae"]["confirm"]["variants"],
        raw["cvae"]["confirm"]["rates"],
    )
    assert raw == raw_params()  # the input is not mutated


def test_each_world_of_the_worlds_study_is_valid_params_with_its_knobs() -> None:
    """studies.worlds' `dvc exp run -S` settings on the default params: valid, the study's design,
    and each world's knobs reaching the world (docs/usage.md#several-worlds)."""
    for name, knobs in WORLDS.items():
        params = parse_params(apply_settings(raw_params(), (*DESIGN, *knobs)))
        assert params.base.seeds == (0, 1, 2, 3), name
        assert params.cvae.confirm.bases == (1, 2, 3), name  # three replicates: the rule decides
        default = parse_params(raw_params()).cvae.confirm.variants
        assert params.cvae.confirm.variants == default, name
        world = World.from_params(params.data)
        if name == "weak":  # the default world under a base stopped at 300 steps
            assert world.prefix == 0 and params.base.max_steps == 300
            continue
        assert params.data.prefix == 2
        assert world.prefix == 2 and (name != "decoys" or world.decoy_positions == (0, 1))


def test_the_remedies_study_adds_each_remedy_against_token_mean_and_the_best_weighting(
    tmp_path: Path,
) -> None:
    """studies.remedies' params per world: valid, every remedy confirmed beside token_mean and the
    world's best weighting, and each declared against that weighting."""
    for name, settings in REMEDY_WORLDS.items():
        best = "token_sum"
        path = tmp_path / f"{name}.yaml"
        path.write_text(yaml.safe_dump(raw_params()))
        study_params(path, settings, best)
        params = parse_params(yaml.safe_load(path.read_text()))
        assert params.cvae.confirm.variants == ("token_mean", best, *REMEDIES), name
        assert all((remedy, best) in params.report.pairs for remedy in REMEDIES)
        assert params.cvae.variant("embedding_only").model.z_memory is False
        assert params.cvae.variant("aggressive").aggressive is not None
        if name == "decoys":
            assert params.data.decoy_positions == (0, 1) and params.base.seeds == (0, 1, 2)
