"""`zgain stability-report`: the claims over bases of one study at several step counts.

Each RUN argument is a finished study's report folder holding its `params.yaml` (e.g.
`reports/examples/confirm4500`, kept by examples/keep_report.sh), or the repository's own
`reports/`, whose params.yaml is the repository's. Writes summary.md and
verdicts.csv (every comparison of tables/procedure.csv present in every run, per run, with its
agreement across runs) into OUT, each file atomically (zgain.sweep.side_by_side). Without
`--out` it writes to the committed example folder, and refuses when that would overwrite a file
git tracks (zgain.cli.worlds.output_folder).
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Annotated

import pandas as pd
import typer
import yaml

from zgain.cli.worlds import TABLES, output_folder, write_text
from zgain.core.errors import DataError
from zgain.core.io import atomic_path
from zgain.sweep.side_by_side import Trained, stability_markdown, stability_table

PROCEDURE = "procedure.csv"
DEFAULT_OUT = Path("reports/examples/stability")
WRITES = ("summary.md", "verdicts.csv")


def read_trained(folder: Path) -> Trained:
    """The study whose report (and params.yaml) is in `folder`; DataError naming what lacks."""
    params_file = folder / "params.yaml"
    if not params_file.is_file() and (folder.parent / "params.yaml").is_file():
        params_file = folder.parent / "params.yaml"  # the repository's own reports/
    needed = [params_file, folder / TABLES / PROCEDURE]
    missing = [str(p) for p in needed if not p.is_file()]
    if missing:
        raise DataError(
            f"{folder}: not a finished study's report with its params (missing "
            f"{', '.join(missing)})"
        )
    params = yaml.safe_load(needed[0].read_text())
    cvae = params["cvae"]
    # the claims over bases are the confirming runs': their steps (cvae.confirm.steps, when set)
    steps = cvae.get("confirm", {}).get("steps") or cvae["common"]["steps"]
    return Trained(
        name=folder.name,
        steps=int(steps),
        confidence=float(params["report"]["confidence"]),
        procedure=pd.read_csv(needed[1]),
    )


def stability_report(
    runs: Annotated[list[Path], typer.Argument(help="each run's report folder (2 or more)")],
    out: Annotated[
        Path | None,
        typer.Option(help=f"folder the view is written to [default: {DEFAULT_OUT}, if untracked]"),
    ] = None,
) -> None:
    """Lay each comparison's verdict over bases per step count side by side and say which hold
    at every step count."""
    out = output_folder(out, DEFAULT_OUT, WRITES, "zgain stability-report")
    try:
        loaded = sorted((read_trained(folder) for folder in runs), key=lambda r: r.steps)
    except DataError as err:
        typer.echo(f"error: {err}", err=True)
        sys.exit(2)
    steps = [r.steps for r in loaded]
    if len(loaded) < 2 or len(set(steps)) != len(steps):
        typer.echo(f"error: needs 2 or more runs at distinct steps, got steps {steps}", err=True)
        sys.exit(2)
    table = stability_table(loaded)
    if table.empty:
        typer.echo(f"error: no comparison of tables/{PROCEDURE} is in every run", err=True)
        sys.exit(2)
    command = shlex.join(["zgain", "stability-report", "--out", str(out), *map(str, runs)])
    write_text(stability_markdown(loaded, table, command), out / "summary.md")
    with atomic_path(out / "verdicts.csv") as tmp:
        table.to_csv(tmp, index=False)
    typer.echo(f"{len(table)} verdicts at steps {steps}: {out / 'summary.md'}")
