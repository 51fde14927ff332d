"""`zgain worlds-report`: lay the verdicts of several worlds' runs side by side.

Each WORLD argument is a finished run's report folder holding its `params.yaml` (the report
folder of a run on another world, copied beside the others: docs/usage.md#several-worlds).
Writes summary.md, verdicts.csv (every comparison present on every world, per world, with its
agreement across worlds) and worlds.csv (knobs, bases, base steps and excess, mean I*, i*_t by
position) into OUT,
each file atomically (zgain.sweep.side_by_side). Without `--out` it writes to the committed
example folder, and refuses when that would overwrite a file git tracks (`tracked_outputs`).
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path
from typing import Annotated

import pandas as pd
import typer
import yaml

from zgain.core.errors import DataError
from zgain.core.io import atomic_path
from zgain.sweep.side_by_side import World, verdicts_across, view_markdown, worlds_table

TABLES = "tables"
NEEDED = ("procedure.csv", "information_by_position.csv", "runs.csv", "bases.csv")
DEFAULT_OUT = Path("reports/examples/worlds")
WRITES = ("summary.md", "verdicts.csv", "worlds.csv")


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


def tracked_outputs(paths: list[Path]) -> list[str]:
    """Those of `paths` that git tracks in the working directory's repository (none outside a
    git checkout, or without git)."""
    try:
        done = subprocess.run(
            ["git", "ls-files", "--", *map(str, paths)],
            capture_output=True,
            text=True,
            check=False,
        )
    except OSError:
        return []
    return done.stdout.split() if done.returncode == 0 else []


def output_folder(out: Path | None, default: Path, writes: tuple[str, ...], command: str) -> Path:
    """`out` when given; else `default`, unless a file the command writes there is tracked by
    git: a committed example is replaced only by naming it with `--out` (exit 2 otherwise)."""
    if out is not None:
        return out
    tracked = tracked_outputs([default / name for name in writes])
    if tracked:
        typer.echo(
            f"error: {command} would overwrite committed files ({', '.join(tracked)}): pass "
            f"--out FOLDER (--out {default} to replace the committed example on purpose)",
            err=True,
        )
        sys.exit(2)
    return default


def write_text(text: str, path: Path) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text)


def worlds_report(
    worlds: Annotated[list[Path], typer.Argument(help="each world's report folder (2 or more)")],
    out: Annotated[
        Path | None,
        typer.Option(help=f"folder the view is written to [default: {DEFAULT_OUT}, if untracked]"),
    ] = None,
) -> None:
    """Lay each comparison's verdict over bases per world side by side; say which hold on every
    world, which flip and where; give each world's i*_t by position."""
    if len(worlds) < 2:
        typer.echo(f"error: needs at least 2 worlds, got {len(worlds)}", err=True)
        sys.exit(2)
    out = output_folder(out, DEFAULT_OUT, WRITES, "zgain worlds-report")
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
