"""Stage `normalizer`: N = E[b] and N_seq = E[B] over the train split, with provenance."""

from __future__ import annotations

from zgain.base.normalizer import compute_normalizer
from zgain.base.tables import read_surprisal_tables
from zgain.core.cli import run_stage
from zgain.core.io import sweep_temporaries, write_json
from zgain.params import Params, load_params


def run(params: Params) -> None:
    sweep_temporaries(params.paths.normalizer)
    tables = read_surprisal_tables(params.paths.surprisal_dir)
    write_json(compute_normalizer(tables).to_json(), params.paths.normalizer)


def main() -> None:
    run(load_params())


if __name__ == "__main__":
    run_stage(main)
