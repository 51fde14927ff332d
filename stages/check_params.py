"""Stage `check_params`: validate the whole `params.yaml` whenever any of it changes.

Every other stage tracks only the keys it reads, so a key no stage reads (a typo such as
`cvea:`, or a misplaced `cvae.beta`) would leave DVC reporting "up to date" while the user
believes a change ran. This stage's params are the whole file: any edit reruns it, and a bad
file stops `dvc repro` with one line per problem (weight names of the reconstruction terms are
checked where the objective is built, by `train_cvae`).
"""

from __future__ import annotations

import typer

from zgain.core.cli import run_stage
from zgain.params import load_params


def main() -> None:
    params = load_params()
    typer.echo(
        f"params.yaml is valid: {len(params.cvae.variants)} variants × "
        f"{len(params.cvae.seeds)} seeds"
    )


if __name__ == "__main__":
    run_stage(main)
