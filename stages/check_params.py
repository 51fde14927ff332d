"""Stage `check_params`: validate the whole `params.yaml` whenever any of it changes.

Every other stage tracks only the keys it reads, so a key no stage reads (a typo such as
`cvea:`, or a misplaced `cvae.beta`) would leave DVC reporting "up to date" while the user
believes a change ran. This stage depends on `params.yaml` as a file (not on its values as
params, which would make every key a column of `dvc exp show`): any edit reruns it, and a bad
file stops `dvc repro` with one line per problem, the weight names of every variant checked
against the registry of reconstruction terms.
"""

from __future__ import annotations

import typer

from zgain.core.cli import run_stage
from zgain.core.errors import ParamsError
from zgain.cvae.objective import weight_errors
from zgain.params import load_params


def main() -> None:
    params = load_params()
    cvae = params.cvae
    lines = [
        line
        for name, variant in cvae.variants.items()
        for line in weight_errors(name, variant.weights)
    ]
    if lines:
        raise ParamsError(*lines)
    counts = [(len(cvae.variants), "variant"), (len(cvae.rates), "rate"), (len(cvae.seeds), "seed")]
    typer.echo("params.yaml is valid: " + " × ".join(f"{n} {w}{'s' * (n != 1)}" for n, w in counts))


if __name__ == "__main__":
    run_stage(main)
