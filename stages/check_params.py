"""Stage `check_params`: validate the whole `params.yaml` whenever any of it changes.

Every other stage tracks only the keys it reads, so a key no stage reads (a typo such as
`cvea:`, or a misplaced `cvae.beta`) would leave DVC reporting "up to date" while the user
believes a change ran. This stage depends on `params.yaml` as a file (not on its values as
params, which would make every key a column of `dvc exp show`): any edit reruns it, and a bad
file stops `dvc repro` with one line per problem, the weight names of every variant checked
against the registry of reconstruction terms and, for `data.source: pairs`, the columns of the
pairs file against the ones params name (`zgain.preflight`).
"""

from __future__ import annotations

from pathlib import Path

import typer

from zgain.core.cli import run_stage
from zgain.core.errors import ParamsError
from zgain.cvae.objective import weight_errors
from zgain.params import PARAMS_FILE, PairsParams, Params, parse_params, read_yaml
from zgain.preflight import pairs_header_errors, probe_split_lines, switched_source_lines


def pairs_file_errors(params: Params) -> list[str]:
    """data.source pairs: the file `generate` will read must exist, open and hold the columns
    params name, checked before any stage runs (generate would otherwise fail only after DVC
    has started it)."""
    data = params.data
    if not isinstance(data, PairsParams):
        return []
    path = Path(data.file)
    if not path.is_file():
        return [f"data.file: {path} not found (no such file under paths.pairs_dir)"]
    try:
        path.open("rb").close()
    except OSError as err:
        return [f"data.file: {path} cannot be read ({err.strerror})"]
    return pairs_header_errors(data)


def problems(path: str | Path = PARAMS_FILE) -> tuple[Params | None, list[str]]:
    """The params of `path` and every problem with them, one line each (none: valid)."""
    try:
        raw = read_yaml(path)
    except ParamsError as err:  # not YAML, or unreadable
        return None, list(err.lines)
    try:
        params = parse_params(raw)
    except ParamsError as err:
        return None, probe_split_lines(switched_source_lines(raw, list(err.lines)))
    lines = [
        line
        for name, variant in params.cvae.variants.items()
        for line in weight_errors(name, variant.weights)
    ]
    return params, lines + pairs_file_errors(params)


def main() -> None:
    params, lines = problems()
    if lines or params is None:
        raise ParamsError(*lines)
    cvae = params.cvae
    counts = [(len(cvae.variants), "variant"), (len(cvae.rates), "rate"), (len(cvae.seeds), "seed")]
    typer.echo("params.yaml is valid: " + " × ".join(f"{n} {w}{'s' * (n != 1)}" for n, w in counts))


if __name__ == "__main__":
    run_stage(main)
