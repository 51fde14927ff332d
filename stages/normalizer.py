"""Stage `normalizer`: N = E[b] and N_seq = E[B] over the train split, with provenance."""

from __future__ import annotations

from pathlib import Path

from zgain.base.normalizer import compute_normalizer
from zgain.core.cli import run_stage
from zgain.core.io import write_json
from zgain.params import Params, load_params


def run(params: Params) -> None:
    examples = Path(params.paths.surprisal_dir) / "examples.parquet"
    write_json(compute_normalizer(examples).to_json(), params.paths.normalizer)


def main() -> None:
    run(load_params())


if __name__ == "__main__":
    run_stage(main)
