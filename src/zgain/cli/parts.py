"""`zgain part` and `zgain combine`: a study trained in parts, combined into one table of claims
over bases (docs/usage.md#a-study-in-parts)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Annotated

import typer

from zgain.core.io import atomic_path
from zgain.figures.draw import save_png
from zgain.figures.forest import bases_forest_figure
from zgain.parts.over_bases import claims
from zgain.parts.record import PartsError, combine, export_part, load_part, trained_variants

CLAIMS_FILE, RUNS_FILE, SUMMARY_FILE = "claims.csv", "runs.csv", "summary.md"
FOREST_FILE = "forest.png"


def part(
    out: Annotated[Path, typer.Argument(help="the part's folder (part.json is written there)")],
    repo: Annotated[Path, typer.Option(help="the checkout whose run this part is")] = Path("."),
    seconds: Annotated[
        float | None, typer.Option(help="the wall time of the run, recorded in part.json")
    ] = None,
    command: Annotated[str | None, typer.Option(help="the command that trained it")] = None,
) -> None:
    """Export the confirming runs of REPO's last run as one part of a study: the training code
    digest, the params and each run's metrics with the md5 of its per-example table."""
    note = {k: v for k, v in (("seconds", seconds), ("command", command)) if v is not None}
    try:
        path = export_part(repo, out, note)
    except FileNotFoundError as err:
        typer.echo(f"error: a confirming run of {repo} has no evaluation: {err}", err=True)
        raise typer.Exit(2) from None
    runs = len(json.loads(path.read_text())["runs"])
    typer.echo(f"{path}: {runs} confirming runs")


def combine_parts(
    parts: Annotated[list[Path], typer.Argument(help="the parts' folders (each with part.json)")],
    out: Annotated[
        Path, typer.Option(help="folder for claims.csv, runs.csv, summary.md, forest.png")
    ],
) -> None:
    """Combine parts trained under the same code and params (only the bases, seeds and
    confirming variants each trained differ) into one set of claims over bases; refuse parts of
    other code or params, or runs two parts hold with different bytes."""
    try:
        loaded = [load_part(p) for p in parts]
        runs = combine(loaded)
    except PartsError as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(2) from None
    params = loaded[0].params
    report = params["report"]
    variants = trained_variants(loaded)
    deltas = {m: report["equivalence"][m] for m in ("capture", "marginal_gain")}
    table = claims(runs, report["baseline_variant"], variants, deltas, report["confidence"])
    rate = params["cvae"]["confirm"]["rates"][0]
    figure = bases_forest_figure(table.assign(rate=rate, n=table["bases"]), deltas)
    for name, frame in ((RUNS_FILE, runs), (CLAIMS_FILE, table)):
        with atomic_path(out / name) as tmp:
            frame.to_csv(tmp, index=False)
    save_png(figure, out / FOREST_FILE)
    with atomic_path(out / SUMMARY_FILE) as tmp:
        tmp.write_text(summary(table, loaded, runs))
    typer.echo(f"{len(runs)} runs from {len(loaded)} parts: {out / SUMMARY_FILE}")


def sigma_cells(r) -> tuple[str, str]:
    """The σ_B and σ_W cells of one claim: each with its interval where seeds separate them,
    else the spread of the base values under σ_B and a dash under σ_W."""
    if math.isnan(r.sigma_w):
        spread = "—" if math.isnan(r.sigma_b) else f"{r.sigma_b:.3f} (B + W, 1 seed)"
        return spread, "—"
    return (
        f"{r.sigma_b:.3f} [{r.sigma_b_low:.3f}, {r.sigma_b_high:.3f}]",
        f"{r.sigma_w:.3f} [{r.sigma_w_low:.3f}, {r.sigma_w_high:.3f}]",
    )


def summary(table, parts, runs) -> str:
    bases = sorted(runs["base"].unique())
    seeds = sorted(runs["seed"].unique())
    lines = [
        "# Claims over bases, combined from parts",
        "",
        f"{len(parts)} parts ({', '.join(p.name for p in parts)}), digest {parts[0].digest}: "
        f"{len(runs)} runs on bases {', '.join(map(str, bases))} × seeds "
        f"{', '.join(map(str, seeds))}. Each row: a − b over the bases (each base's mean over "
        "its seeds), its t-interval, σ_B and σ_W with intervals, the Δ detectable at 80% power, "
        "the power at ±δ, Holm over each metric's comparisons, and the verdict. With one seed "
        "per base σ_B and σ_W are not separable: the σ_B cell then gives the SD of the base "
        "values, √(σ_B² + σ_W²) with one seed, which the detectable Δ uses.",
        "",
        "| a − b | metric | Δ | interval | bases × seeds | σ_B | σ_W | detectable | power at δ "
        "| verdict |",
        "|---|---|---:|---|---|---|---|---:|---:|---|",
    ]
    for r in table.itertuples(index=False):
        lines.append(
            f"| {r.a} − {r.b} | {r.metric} | {r.mean:+.3f} | [{r.low:+.3f}, {r.high:+.3f}] | "
            f"{r.bases} × {r.seeds} | {' | '.join(sigma_cells(r))} | {r.detectable:.3f} | "
            f"{r.power_at_delta:.2f} | {r.verdict} |"
        )
    lines += ["", f"![The claims over bases, each Δ with its interval]({FOREST_FILE})"]
    return "\n".join(lines) + "\n"
