"""`zgain worlds-report`: lay the verdicts of several worlds' runs side by side.

Each WORLD argument is a finished run's report folder holding its `params.yaml` (the report
folder of a run on another world, copied beside the others: docs/usage.md#several-worlds).
Writes summary.md, verdicts.csv (every comparison present on every world, per world, with its
agreement across worlds) and worlds.csv (knobs, bases, base steps and excess, mean I*, i*_t by
position) into OUT,
each file atomically (zgain.report.side_by_side).
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Annotated

import pandas as pd
import typer
import yaml

from zgain.core.errors import DataError
from zgain.core.io import atomic_path
from zgain.report.side_by_side import World, verdicts_across, view_markdown, worlds_table

TABLES = "tables"
NEEDED = ("procedure.csv", "information_by_position.csv", "runs.csv", "bases.csv")


def read_world(folder: Path) -> World:
    """The world whose report (and params.yaml) is in `folder`; DataError naming what lacks."""
    params_file = folder / "params.yaml"
    missing = [str(params_file)] if not params_file.is_file() else []
    missing += [str(folder / TABLES / n) for n in NEEDED if not (folder / TABLES / n).is_file()]
    if missing:
        raise DataError(
            f"{folder}: not a finished run's report with its params (missing {', '.join(missing)})"
        )
    runs = pd.read_csv(folder / TABLES / "runs.csv")
    if "oracle_info" not in runs.columns:
        raise DataError(
            f"{folder / TABLES / 'runs.csv'}: no oracle_info column (a world "
            "without an exact oracle has no i*_t to show)"
        )
    bases = pd.read_csv(folder / TABLES / "bases.csv")
    return World(
        name=folder.name,
        params=yaml.safe_load(params_file.read_text()),
        procedure=pd.read_csv(folder / TABLES / "procedure.csv"),
        positions=pd.read_csv(folder / TABLES / "information_by_position.csv"),
        oracle_info=float(runs["oracle_info"].mean()),
        test_excess=float(bases.drop_duplicates("base")["test_excess_nats"].mean()),
    )


def write_text(text: str, path: Path) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text)


def worlds_report(
    worlds: Annotated[list[Path], typer.Argument(help="each world's report folder (2 or more)")],
    out: Annotated[Path, typer.Option(help="folder the view is written to")] = Path(
        "reports/examples/worlds"
    ),
) -> None:
    """Lay each comparison's verdict over bases per world side by side; say which hold on every
    world, which flip and where; give each world's i*_t by position."""
    if len(worlds) < 2:
        typer.echo(f"error: needs at least 2 worlds, got {len(worlds)}", err=True)
        sys.exit(2)
    names = [w.name for w in worlds]
    if len(set(names)) != len(names):
        typer.echo(f"error: world folders must have distinct names, got {names}", err=True)
        sys.exit(2)
    try:
        loaded = [read_world(folder) for folder in worlds]
    except DataError as err:
        typer.echo(f"error: {err}", err=True)
        sys.exit(2)
    across = verdicts_across(loaded)
    if across.empty:
        typer.echo("error: no comparison of tables/procedure.csv is on every world", err=True)
        sys.exit(2)
    command = shlex.join(["zgain", "worlds-report", "--out", str(out), *map(str, worlds)])
    write_text(view_markdown(loaded, across, command), out / "summary.md")
    with atomic_path(out / "verdicts.csv") as tmp:
        across.to_csv(tmp, index=False)
    with atomic_path(out / "worlds.csv") as tmp:
        worlds_table(loaded).to_csv(tmp, index=False)
    typer.echo(
        f"{across.drop_duplicates(['a', 'b', 'rate', 'metric']).shape[0]} comparisons on "
        f"{len(loaded)} worlds: {out / 'summary.md'}"
    )
