"""Stage `normalizer@<b>`: N = E[b] and N_seq = E[B] of base b over the train split, with
provenance."""

from __future__ import annotations

from zgain.base.normalizer import compute_normalizer
from zgain.base.tables import read_surprisal_tables
from zgain.core.cli import BaseOption, run_stage
from zgain.core.io import sweep_temporaries, write_json
from zgain.params import Params, load_params


def run(params: Params, base: int) -> None:
    paths = params.paths.base(params.base.seed(base))
    sweep_temporaries(paths.normalizer)
    tables = read_surprisal_tables(paths.surprisal_dir)
    write_json(compute_normalizer(tables).to_json(), paths.normalizer)


def main(base: BaseOption) -> None:
    run(load_params(), base)


if __name__ == "__main__":
    run_stage(main)
