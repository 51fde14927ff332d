"""`zgain check`: does a fresh run agree with the committed one?

After `make repro` on another machine every number differs from the committed run's in its last
digits (float rounding differs between machines, and training amplifies it), so a digit-by-digit
diff says nothing. This compares the fresh report's per-rate decomposition tables
(`reports/tables/decomposition_rate<C>.csv`) with the committed ones (git HEAD), metric by
metric at every rate: a fresh seed mean inside the committed seed interval agrees.
"""

from __future__ import annotations

import io
import math
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import pandas as pd
import typer

TABLES = "tables"
PATTERN = "decomposition_rate*.csv"
KEY = ["variant", "metric"]


@dataclass(frozen=True)
class Verdict:
    """One metric of one variant at one rate: the fresh mean against the committed interval."""

    table: str
    variant: str
    metric: str
    fresh: float
    low: float
    high: float

    @property
    def inside(self) -> bool:
        return self.low <= self.fresh <= self.high

    def line(self) -> str:
        where = "inside" if self.inside else "OUTSIDE"
        return (
            f"{self.table}: {self.variant} {self.metric} = {self.fresh:.4f} {where} "
            f"[{self.low:.4f}, {self.high:.4f}]"
        )


def committed_text(repo: Path, path: str, revision: str) -> str | None:
    """The file at `revision` (None when it has none)."""
    done = subprocess.run(
        ["git", "-C", str(repo), "show", f"{revision}:{path}"], capture_output=True, text=True
    )
    return done.stdout if done.returncode == 0 else None


def compare(fresh: pd.DataFrame, committed: pd.DataFrame, table: str) -> list[Verdict]:
    """A verdict per (variant, metric) that has a committed interval and a fresh mean."""
    joined = committed.merge(fresh, on=KEY, suffixes=("_committed", "_fresh"))
    out = []
    for row in joined.itertuples(index=False):
        low, high, mean = row.low_committed, row.high_committed, row.mean_fresh
        if not all(math.isfinite(v) for v in (low, high, mean)):
            continue
        out.append(Verdict(table, row.variant, row.metric, float(mean), float(low), float(high)))
    return out


def check_reports(reports: Path, repo: Path, revision: str = "HEAD") -> list[Verdict]:
    """Every verdict of every per-rate table present both fresh and at `revision`."""
    tables = sorted((reports / TABLES).glob(PATTERN))
    if not tables:
        raise FileNotFoundError(f"{reports / TABLES}: no {PATTERN} (run `make repro` first)")
    verdicts = []
    for path in tables:
        relative = path.resolve().relative_to(repo.resolve()).as_posix()
        text = committed_text(repo, relative, revision)
        if text is None:
            continue
        verdicts += compare(pd.read_csv(path), pd.read_csv(io.StringIO(text)), path.name)
    return verdicts


def check(
    reports: Annotated[Path, typer.Option(help="the fresh run's report folder")] = Path("reports"),
    revision: Annotated[str, typer.Option(help="the committed run to compare with")] = "HEAD",
    verbose: Annotated[bool, typer.Option(help="print every metric, not only outside")] = False,
) -> None:
    """Say whether each fresh headline value lies inside the committed run's seed interval;
    exit 0 when all do, 1 when any does not."""
    repo = Path(
        subprocess.run(
            ["git", "rev-parse", "--show-toplevel"], capture_output=True, text=True, check=True
        ).stdout.strip()
    )
    try:
        verdicts = check_reports(reports, repo, revision)
    except FileNotFoundError as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(2) from None
    if not verdicts:
        typer.echo(f"error: no table of {reports / TABLES} is committed at {revision}", err=True)
        raise typer.Exit(2)
    outside = [v for v in verdicts if not v.inside]
    for verdict in verdicts if verbose else outside:
        typer.echo(verdict.line())
    tables = len({v.table for v in verdicts})
    typer.echo(
        f"{len(verdicts) - len(outside)} of {len(verdicts)} metrics ({tables} rates) lie inside "
        f"the committed run's intervals ({revision})"
    )
    if outside:
        raise typer.Exit(1)
