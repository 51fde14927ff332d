"""The `zgain` command: reports over DVC experiments (installed as a console script).

The pipeline itself runs through DVC (`dvc repro`, `dvc exp run`); `zgain shard` runs one
worker's share of it across machines, `zgain sweep-report` reads what the experiments produced.
`zgain --help` lists the subcommands.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from zgain.cli.check import check
from zgain.cli.cmudict import cmudict_pairs
from zgain.cli.parts import combine_parts, part
from zgain.cli.shard import shard
from zgain.cli.stability import stability_report
from zgain.cli.worlds import worlds_report

app = typer.Typer(
    help="zgain: how much a latent z tells a CVAE about y beyond x. The pipeline runs through "
    "DVC (dvc repro, dvc exp run); these commands spread it over machines and report on what "
    "it produced.",
    no_args_is_help=True,
    add_completion=False,
)


@app.callback()
def zgain() -> None:
    """Tools around the zgain DVC pipeline (see each command's --help)."""


# One-line summaries for the command list (rich keeps a docstring's line breaks, which then
# wrap single words onto lines of their own at 80 columns).
app.command(
    "shard", short_help="Run shard INDEX of COUNT of the runs; push them with the run-cache."
)(shard)
app.command(
    "check",
    short_help="Compare a fresh report with the committed one (calibrated exit status).",
)(check)
app.command(
    "worlds-report",
    short_help="Lay the verdicts of several worlds' runs side by side.",
)(worlds_report)
app.command(
    "stability-report",
    short_help="Lay the verdicts over bases of one study at several step counts side by side.",
)(stability_report)
app.command(
    "part", short_help="Export this checkout's confirming runs as one part of a larger study."
)(part)
app.command(
    "combine",
    short_help="Combine parts of one study (same code and params) into claims over bases.",
)(combine_parts)
app.command(
    "cmudict-pairs",
    short_help="Write CMUdict's (word, pronunciation) pairs with their exact oracle columns.",
)(cmudict_pairs)


@app.command(
    "sweep-report", short_help="Tabulate and compare the finished experiments of this commit."
)
def sweep_report(
    out: Annotated[
        Path, typer.Option(help="folder the report is written to (created; files replaced)")
    ] = Path("reports/sweeps/sweep"),
    repo: Annotated[str, typer.Option(help="the DVC repository to read")] = ".",
    baseline: Annotated[
        str | None,
        typer.Option(help="experiment or rev to compare with (default: the committed baseline)"),
    ] = None,
) -> None:
    """Tabulate every finished experiment of the current commit (`dvc exp show`).

    Writes table.md / table.csv (one row per experiment × variant: the params that differ
    between experiments, the headline rate and the seed means of I^θ, capture, G^marg, kl and
    normalized recovery from each experiment's reports/metrics.json) and frontier.png (I^θ and
    G^marg against kl). When the experiments vary the (alpha, gamma) of a variant that weights
    only `unified`, also family.md / family.csv / family.png: capture and G^marg over (α, γ)
    with the named variants placed where they sit in the family.
    """
    from zgain.sweep.tables import SweepError
    from zgain.sweep.write import write_sweep_report

    try:
        written, n_rows, n_experiments, no_comparison = write_sweep_report(out, repo, baseline)
    except SweepError as err:
        typer.echo(f"error: {err}", err=True)
        sys.exit(2)
    if no_comparison:
        typer.echo(f"note: no comparison with a baseline ({no_comparison})")
    typer.echo(f"{n_rows} rows from {n_experiments} experiments:")
    for name in written:
        typer.echo(f"  {out / name}")


def main() -> None:
    app()


if __name__ == "__main__":
    main()
