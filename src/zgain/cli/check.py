"""`zgain check`: does a fresh run agree with the committed one?

After `make repro` on another CPU every run differs from the committed one (float rounding
differs and training amplifies it), so a digit-by-digit diff says nothing. This compares what
the design has intervals for: each claim over bases (tables/procedure.csv, a t-interval over the
confirming bases) and each per-rate seed mean where a cell has two or more seeds
(decomposition_rate<C>.csv). An unchanged rerun puts some values outside (a fresh mean lies
inside the committed interval with `inside_probability`), so the exit status compares the count
outside with its distribution under an unchanged rerun and fails above its PASS_LEVEL quantile,
or when a separated verdict reverses (better against worse). Runs with one seed have no
interval: they are compared run by run (`zgain.cli.check_runs`) and reported, never failed
(docs/usage.md#what-is-and-is-not-reproducible).
"""

from __future__ import annotations

import io
import math
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import numpy as np
import pandas as pd
import typer
import yaml

from zgain.cli.check_bases import (
    PROCEDURE_KEY,
    procedure_outside_counts,
    reversed_in,
    reversed_over_bases,
)
from zgain.cli.check_runs import RunComparison, compare_runs
from zgain.results.registry import FOLDER as TABLES
from zgain.results.registry import PROCEDURE, RUNS, VERDICTS
from zgain.stats.intervals import half_width
from zgain.stats.power import inside_probability

PASS_LEVEL = 0.99  # an unchanged rerun passes with this probability
NULL_DRAWS = 4000  # simulated reruns behind the threshold
NULL_SEED = 0
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
    expected: float
    """The probability of `inside` if the fresh run were another draw of the committed run's
    seeds (`inside_probability`)."""
    n_committed: int = 3
    n_fresh: int = 3

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


def compare(
    fresh: pd.DataFrame, committed: pd.DataFrame, table: str, confidence: float
) -> list[Verdict]:
    """A verdict per (variant, metric) that has a committed interval and a fresh mean, the
    committed intervals being t-intervals at `confidence` over `n` seeds."""
    joined = committed.merge(fresh, on=KEY, suffixes=("_committed", "_fresh"))
    out = []
    for row in joined.itertuples(index=False):
        low, high, mean = row.low_committed, row.high_committed, row.mean_fresh
        if not all(math.isfinite(v) for v in (low, high, mean)):
            continue
        expected = inside_probability(int(row.n_committed), int(row.n_fresh), confidence)
        verdict = Verdict(
            table,
            row.variant,
            row.metric,
            float(mean),
            float(low),
            float(high),
            expected,
            int(row.n_committed),
            int(row.n_fresh),
        )
        out.append(verdict)
    return out


def committed_confidence(repo: Path, revision: str) -> float:
    """The level of the committed run's intervals: `report.confidence` in its params.yaml."""
    params = yaml.safe_load(committed_text(repo, "params.yaml", revision) or "{}") or {}
    confidence = params.get("report", {}).get("confidence")
    if not isinstance(confidence, float):
        raise FileNotFoundError(f"params.yaml at {revision}: no report.confidence")
    return confidence


def fresh_tables(reports: Path) -> dict[str, str]:
    """The text of each per-rate table under `reports`, by file name."""
    tables = sorted((reports / TABLES).glob(PATTERN))
    if not tables:
        raise FileNotFoundError(f"{reports / TABLES}: no {PATTERN} (run `make repro` first)")
    return {path.name: path.read_text() for path in tables}


def committed_tables(repo: Path, folder: str, names: list[str], revision: str) -> dict[str, str]:
    """The text at `revision` of each named table in `folder` (relative to repo), when it has it."""
    found = {name: committed_text(repo, f"{folder}/{name}", revision) for name in names}
    return {name: text for name, text in found.items() if text is not None}


def compare_tables(
    fresh: dict[str, str], reference: dict[str, str], confidence: float
) -> list[Verdict]:
    """Every verdict of every table (by file name) present in both."""
    verdicts = []
    for name in sorted(fresh.keys() & reference.keys()):
        frames = [pd.read_csv(io.StringIO(text)) for text in (fresh[name], reference[name])]
        verdicts += compare(*frames, name, confidence)
    return verdicts


def metric_correlation(
    runs: pd.DataFrame | None, variant: str, rate: float, metrics: list[str]
) -> np.ndarray:
    """The committed seeds' correlation between `metrics` of one (variant, rate) (identity
    where a metric has no spread, or without the committed runs table)."""
    k = len(metrics)
    if runs is None:
        return np.eye(k)
    cell = runs[(runs["variant"] == variant) & np.isclose(runs["rate"], rate)]
    if len(cell) < 2 or not set(metrics) <= set(cell.columns):
        return np.eye(k)
    values = cell[metrics].to_numpy(dtype=np.float64)
    spread = values.std(axis=0, ddof=1)
    kept = np.isfinite(spread) & (spread > 0)
    corr = np.eye(k)
    if kept.sum() > 1:
        sub = np.corrcoef(values[:, kept], rowvar=False)
        corr[np.ix_(kept, kept)] = np.nan_to_num(sub, nan=0.0)
        np.fill_diagonal(corr, 1.0)
    return corr


def null_outside_counts(
    verdicts: list[Verdict],
    runs: pd.DataFrame | None,
    confidence: float,
    draws: int = NULL_DRAWS,
    seed: int = NULL_SEED,
) -> np.ndarray:
    """(draws,) the number of `verdicts`' metrics outside under an unchanged rerun: per
    (table, variant), normal seed values with the committed seeds' correlation across its
    metrics, n_committed of them giving the interval and n_fresh the fresh mean; cells
    independent of each other."""
    rng = np.random.default_rng(seed)
    counts = np.zeros(draws, dtype=np.int64)
    cells: dict[tuple[str, str], list[Verdict]] = {}
    for v in verdicts:
        cells.setdefault((v.table, v.variant), []).append(v)
    for (table, variant), members in cells.items():
        metrics = [v.metric for v in members]
        corr = metric_correlation(runs, variant, rate_of(table), metrics)
        values, vectors = np.linalg.eigh(corr)
        root = vectors * np.sqrt(np.clip(values, 0.0, None))  # corr = root @ root.T
        n, n_f = members[0].n_committed, members[0].n_fresh
        committed = rng.standard_normal((draws, n, len(metrics))) @ root.T
        fresh = rng.standard_normal((draws, n_f, len(metrics))) @ root.T
        half = half_width(committed.std(axis=1, ddof=1), n, confidence) / math.sqrt(n)
        gap = np.abs(fresh.mean(axis=1) - committed.mean(axis=1))
        counts += (gap > half).sum(axis=1)
    return counts


def rate_of(table: str) -> float:
    """The target rate in a per-rate table's name, decomposition_rate<C>.csv."""
    return float(table.removeprefix("decomposition_rate").removesuffix(".csv"))


def reversed_verdicts(fresh: str | None, committed: str | None) -> list[str]:
    """Comparisons of tables/verdicts.csv whose separated verdict reversed (better in one run,
    worse in the other)."""
    return reversed_in(fresh, committed)


def procedure_verdicts(reports: Path, repo: Path, revision: str) -> list[Verdict]:
    """Each comparison over bases (tables/procedure.csv) with a committed interval: the fresh
    mean against it, expected inside with `inside_probability` over the bases (a rerun that
    redraws every base is another draw of the per-base means). Empty when either run has none."""
    fresh = reports / TABLES / PROCEDURE.file
    text = committed_text(repo, f"{tables_folder(reports, repo)}/{PROCEDURE.file}", revision)
    if not fresh.is_file() or text is None:
        return []
    confidence = committed_confidence(repo, revision)
    committed = pd.read_csv(io.StringIO(text))
    joined = committed.merge(pd.read_csv(fresh), on=PROCEDURE_KEY, suffixes=("_c", "_f"))
    out = []
    for row in joined.itertuples(index=False):
        if not all(math.isfinite(v) for v in (row.low_c, row.high_c, row.mean_f)):
            continue
        expected = inside_probability(int(row.n_c), int(row.n_f), confidence)
        label = f"{row.a} − {row.b} C = {row.rate!r}"
        out.append(
            Verdict(
                PROCEDURE.file,
                label,
                row.metric,
                float(row.mean_f),
                float(row.low_c),
                float(row.high_c),
                expected,
                int(row.n_c),
                int(row.n_f),
            )
        )
    return out


def tables_folder(reports: Path, repo: Path) -> str:
    """The report's tables folder relative to the repository (how git names it)."""
    return (reports / TABLES).resolve().relative_to(repo.resolve()).as_posix()


def check_reports(reports: Path, repo: Path, revision: str = "HEAD") -> list[Verdict]:
    """Every verdict of every per-rate table present both fresh and at `revision`."""
    fresh = fresh_tables(reports)
    confidence = committed_confidence(repo, revision)
    committed = committed_tables(repo, tables_folder(reports, repo), list(fresh), revision)
    return compare_tables(fresh, committed, confidence)


@dataclass(frozen=True)
class Calibration:
    """What an unchanged rerun would do, and whether a separated verdict reversed."""

    threshold: int  # the PASS_LEVEL quantile of the count outside under an unchanged rerun
    null_mean: float
    dependence: bool  # whether the committed runs' correlation between metrics was used
    reversed: list[str]

    def passes(self, outside: int) -> bool:
        return outside <= self.threshold and not self.reversed


def calibrate(
    verdicts: list[Verdict], procedure: list[Verdict], reports: Path, repo: Path, revision: str
) -> Calibration:
    """The exit rule's inputs: the simulated null of the count outside (per-rate metrics with
    the committed runs' dependence between metrics, plus the comparisons over bases) and the
    separated verdicts that reversed."""
    folder = tables_folder(reports, repo)
    runs_text = committed_text(repo, f"{folder}/{RUNS.file}", revision)
    runs = pd.read_csv(io.StringIO(runs_text)) if runs_text else None
    null = null_outside_counts(verdicts, runs, committed_confidence(repo, revision))
    null = null + procedure_outside_counts([v.expected for v in procedure])
    flipped = []
    for table, rule in ((VERDICTS, reversed_verdicts), (PROCEDURE, reversed_over_bases)):
        fresh = reports / TABLES / table.file
        flipped += rule(
            fresh.read_text() if fresh.is_file() else None,
            committed_text(repo, f"{folder}/{table.file}", revision),
        )
    threshold = int(np.quantile(null, PASS_LEVEL, method="higher"))
    return Calibration(threshold, float(null.mean()), runs is not None, flipped)


def fresh_text(reports: Path, name: str) -> str | None:
    path = reports / TABLES / name
    return path.read_text() if path.is_file() else None


def check(
    reports: Annotated[Path, typer.Option(help="the fresh run's report folder")] = Path("reports"),
    revision: Annotated[str, typer.Option(help="the committed run to compare with")] = "HEAD",
    verbose: Annotated[bool, typer.Option(help="print every value, not only outside")] = False,
) -> None:
    """Compare a fresh report with the committed one: each claim over bases and each per-rate
    seed mean against its committed interval, and each run against its committed value. Exit 1
    when more values lie outside the intervals than an unchanged rerun would put there 99% of
    the time, or when a separated verdict reversed; 0 otherwise (the run-by-run part is
    reported, never failed: one seed has no interval)."""
    repo = Path(
        subprocess.run(
            ["git", "rev-parse", "--show-toplevel"], capture_output=True, text=True, check=True
        ).stdout.strip()
    )
    try:
        verdicts = check_reports(reports, repo, revision)
        procedure = procedure_verdicts(reports, repo, revision)
        folder = tables_folder(reports, repo)
    except FileNotFoundError as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(2) from None
    by_run = compare_runs(
        fresh_text(reports, RUNS.file), committed_text(repo, f"{folder}/{RUNS.file}", revision)
    )
    if not verdicts and not procedure and by_run is None:
        typer.echo(f"error: no table of {reports / TABLES} is committed at {revision}", err=True)
        raise typer.Exit(2)
    compared = verdicts + procedure
    outside = [v for v in compared if not v.inside]
    for verdict in compared if verbose else outside:
        typer.echo(verdict.line())
    rule = calibrate(verdicts, procedure, reports, repo, revision)
    for line in rule.reversed:
        typer.echo(f"REVERSED: {line}")
    for line in summary_lines(verdicts, procedure, by_run, rule, revision):
        typer.echo(line)
    passed = rule.passes(len(outside))
    typer.echo(
        f"zgain check: {'pass' if passed else 'FAIL'}: {len(outside)} of {len(compared)} values "
        f"outside the committed intervals (an unchanged rerun: up to {rule.threshold}), "
        f"{len(rule.reversed)} verdicts reversed"
    )
    if not passed:
        raise typer.Exit(1)


def summary_lines(
    verdicts: list[Verdict],
    procedure: list[Verdict],
    by_run: RunComparison | None,
    rule: Calibration,
    revision: str,
) -> list[str]:
    """What was compared, one line per part."""
    dependence = "the committed runs' correlation" if rule.dependence else "none (no runs.csv)"
    tables = len({v.table for v in verdicts})
    lines = [
        f"per rate: {sum(v.inside for v in verdicts)} of {len(verdicts)} seed means ({tables} "
        f"rates) lie inside the committed run's intervals ({revision})"
        + ("" if verdicts else "; none has an interval (one seed per run)")
    ]
    if procedure:
        expected = sum(v.expected for v in procedure)
        lines.append(
            f"over bases: {sum(v.inside for v in procedure)} of {len(procedure)} comparisons lie "
            f"inside the committed intervals over {procedure[0].n_committed} bases; a rerun that "
            f"redraws every base puts {expected:.1f} inside on average (a rerun on a machine "
            "that retrains the same bases puts all inside)"
        )
    else:
        lines.append("over bases: no comparison has a committed interval (fewer than 2 bases)")
    lines.append(
        f"exit rule: an unchanged rerun puts up to {rule.threshold} of these "
        f"{len(verdicts) + len(procedure)} values outside {PASS_LEVEL:.0%} of the time (mean "
        f"{rule.null_mean:.1f}; dependence between metrics: {dependence}); "
        "docs/usage.md#what-is-and-is-not-reproducible"
    )
    if by_run is not None:
        lines.append(by_run.line())
    return lines
