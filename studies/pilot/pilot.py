"""Which replicate is cheapest: σ_B and σ_W of each contested Δ, measured, and the designs that
decide δ.

    python -m studies.pilot.pilot PART... --clock CLOCK... --base-seconds BASES.json \
        --out studies/pilot/pilot-results.md --table studies/pilot/pilot.csv [--design B K]

PART is a folder written by `zgain part` after a run whose confirming tier has two or more
seeds on every confirming base (`dvc exp run -S 'cvae.confirm.seeds=[0,1]'`); several parts of
one study combine (`zgain.parts.record.combine`). For each contested variant and metric the
claims over bases (`zgain.parts.over_bases.claims`) give σ_B (between bases) and σ_W (seeds
within a base) with 95% intervals. The costs are the stages' measured seconds from stage
clocks (`<epoch> Running stage '<name>':` lines written as `dvc repro` started each stage): a
seed costs one confirming group (train + evaluate), a new base adds train_base (its recorded
training seconds, `base_seconds` in the part) + surprisal + normalizer. k* = √(c_B σ_W² /
(c_s σ_B²)) seeds per base minimise the variance per unit cost; the last table gives, for each
seed count, the fewest bases whose detectable Δ (80% power, two-sided) is at most δ. The
table (--table) holds the same numbers, one row per difference and metric, for the docs to quote.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from zgain.parts.over_bases import claims
from zgain.parts.record import combine, load_part, trained_variants
from zgain.stats.power import detectable_difference, seeds_per_base

METRICS = {"capture": "capture", "marginal_gain": "G^marg"}
CONFIDENCE = 0.95
DELTA = 0.05


@dataclass(frozen=True)
class Costs:
    """Seconds: one confirming group (a seed on a base) and what a new base adds before it."""

    seed: float
    base: float


MARKS = ("Running stage '", "Stage '", "END")
"""The clock lines that start or end a stage: a stage started, one skipped (unchanged), the end;
every other line (a stage's own output) is left out."""


def stage_seconds(clocks: list[Path]) -> dict[str, list[float]]:
    """Each stage's seconds from stage clocks: `<epoch> <line>` for each line `dvc repro` wrote
    (`<epoch> Running stage '<name>':` as it started a stage, `<epoch> END …` when it ended);
    stages ran one at a time, so a stage lasts until the next stage started or was skipped, or
    the run ended. Keyed by the stage's name before `@`."""
    out: dict[str, list[float]] = {}
    for clock in clocks:
        lines = [line.split(" ", 1) for line in clock.read_text().splitlines() if line.strip()]
        stamps = [(float(t), rest) for t, rest in lines if rest.startswith(MARKS)]
        for (start, rest), (end, _) in zip(stamps, stamps[1:], strict=False):
            if rest.startswith("Running stage '"):
                name = rest.split("'")[1].split("@")[0]
                out.setdefault(name, []).append(end - start)
    return out


def costs(seconds: dict[str, list[float]], base_training: list[float]) -> Costs:
    """Median seconds of a confirming group (train + evaluate) and of what a base adds (its
    training, from each base.json's recorded seconds, then surprisal and normalizer)."""
    med = {k: float(np.median(v)) for k, v in seconds.items()}
    seed = med["confirm_train_cvae"] + med["confirm_evaluate"]
    base = float(np.median(base_training)) + med["surprisal"] + med["normalizer"]
    return Costs(seed, base)


def designs(
    sigma_b: float, sigma_w: float, have_bases: int, costs: Costs
) -> list[tuple[int, int, float, float]]:
    """(bases, seeds per base, detectable Δ, hours of training) for the smallest design of each
    seed count k = 1..8 whose detectable Δ is at most DELTA (bases up to 60)."""
    out = []
    for k in range(1, 9):
        for b in range(max(2, have_bases), 61):
            found = detectable_difference(sigma_b, sigma_w, b, k, CONFIDENCE)
            if found <= DELTA:
                hours = (b * costs.base + b * k * costs.seed) / 3600
                out.append((b, k, found, hours))
                break
    return out


def row(r) -> str:
    return (
        f"| {r.a} − {r.b} | {METRICS[r.metric]} | {r.mean:+.3f} | {r.sigma_b:.3f} "
        f"[{r.sigma_b_low:.3f}, {r.sigma_b_high:.3f}] | {r.sigma_w:.3f} [{r.sigma_w_low:.3f}, "
        f"{r.sigma_w_high:.3f}] | {r.detectable:.3f} |"
    )


PLAN = ("plan_bases", "plan_seeds", "plan_detectable", "plan_hours")


def pilot_table(
    runs, params: dict, variants: list[str], cost: Costs, design: tuple[int, int] | None = None
):
    """The claims over bases with σ_B and σ_W, and for capture k* and the cheapest design of
    detectable Δ ≤ DELTA (its bases, seeds per base, detectable Δ and hours; empty for G^marg
    and where no design up to 60 bases reaches DELTA). With `design` (bases, seeds per base),
    each row's detectable Δ under that design at the measured σ (`design_detectable`)."""
    rep = params["report"]
    deltas = {m: rep["equivalence"][m] for m in METRICS}
    table = claims(runs, rep["baseline_variant"], variants, deltas, CONFIDENCE)
    have = runs["base"].nunique()
    columns: dict[str, list] = {key: [] for key in ("k_star", *PLAN)}
    for r in table.itertuples(index=False):
        capture = r.metric == "capture"
        k_star = seeds_per_base(cost.base, cost.seed, r.sigma_b, r.sigma_w) if capture else None
        plans = designs(r.sigma_b, r.sigma_w, have, cost) if capture else []
        best = min(plans, key=lambda plan: plan[3]) if plans else (None,) * len(PLAN)
        columns["k_star"].append(k_star)
        for key, value in zip(PLAN, best, strict=True):
            columns[key].append(value)
    if design:
        bases, seeds = design
        columns["design_detectable"] = [
            detectable_difference(r.sigma_b, r.sigma_w, bases, seeds, CONFIDENCE)
            for r in table.itertuples(index=False)
        ]
    return table.assign(**columns)


def report(
    folders: list[Path],
    clocks: list[Path],
    base_seconds: list[float],
    design: tuple[int, int] | None = None,
) -> tuple[str, object]:
    parts = [load_part(f) for f in folders]
    runs = combine(parts)
    params = parts[0].params
    confirm = params["cvae"]["confirm"]
    cost = costs(stage_seconds(clocks), base_seconds)
    table = pilot_table(runs, params, trained_variants(parts), cost, design)
    bases, seeds = sorted(runs["base"].unique()), sorted(runs["seed"].unique())
    lines = [
        "# The pilot: σ_B and σ_W of each contested difference",
        "",
        f"{len(bases)} confirming bases ({', '.join(map(str, bases))}) × {len(seeds)} seeds, "
        f"C = {confirm['rates'][0]}, {confirm['steps']} steps, parts: "
        f"{', '.join(p.name for p in parts)} (digest {parts[0].digest}); "
        f"{CONFIDENCE:.0%} intervals (σ_W: χ², σ_B: Graybill–Wang MLS). "
        "Made by `python -m studies.pilot.pilot` ([README](README.md)).",
        "",
        "| difference | metric | Δ | σ_B [interval] | σ_W [interval] | detectable Δ, this design |",
        "|---|---|---:|---|---|---:|",
        *[row(r) for r in table.itertuples(index=False)],
        "",
        f"Measured cost: one seed on a base (a confirming group, train + evaluate) "
        f"{cost.seed:.0f} s; a new base adds {cost.base:.0f} s before its seeds (train_base "
        f"median {np.median(base_seconds):.0f} s, surprisal, normalizer).",
        "",
        f"| difference | k* = √(c_B σ_W² / (c_s σ_B²)) | fewest bases × seeds with detectable "
        f"Δ ≤ {DELTA} (detectable, hours of training) |",
        "|---|---:|---|",
    ]
    for r in table[table["metric"] == "capture"].itertuples(index=False):
        plans = designs(r.sigma_b, r.sigma_w, len(bases), cost)
        cells = "; ".join(f"{b} × {k}: {d:.3f}, {h:.1f} h" for b, k, d, h in plans[:4])
        lines.append(f"| {r.a} − {r.b} (capture) | {r.k_star:.2f} | {cells or 'none'} |")
    if design:
        found = ", ".join(
            f"{r.a} {r.design_detectable:.3f}"
            for r in table[table["metric"] == "capture"].itertuples(index=False)
        )
        lines += [
            "",
            f"The declared design, {design[0]} bases × {design[1]} seeds: detectable capture Δ at "
            f"the measured σ {found}.",
        ]
    return "\n".join(lines) + "\n", table


def cost_record(clocks: list[Path], base_seconds: list[float]) -> dict:
    """The measured costs, in seconds, and the ratio σ_W/σ_B above which a seed on an existing
    base buys more precision per second than a new base (k* > 1: σ_W/σ_B > √(c_s/c_B))."""
    cost = costs(stage_seconds(clocks), base_seconds)
    return {
        "seed_seconds": round(cost.seed, 1),
        "base_seconds": round(cost.base, 1),
        "base_training_seconds": [round(s, 1) for s in base_seconds],
        "seeds_win_above_ratio": round(float(np.sqrt(cost.seed / cost.base)), 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("parts", type=Path, nargs="*")
    parser.add_argument("--clock", type=Path, action="append", required=True)
    parser.add_argument("--base-seconds", type=Path, required=True,
                        help="JSON list of the bases' recorded training seconds")  # fmt: skip
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--table", type=Path, help="CSV of the same numbers (with PARTs)")
    parser.add_argument("--design", type=int, nargs=2, metavar=("BASES", "SEEDS"),
                        help="a design whose detectable Δ at the measured σ to add")  # fmt: skip
    args = parser.parse_args()
    base_seconds = json.loads(args.base_seconds.read_text())
    if not args.parts:  # the costs alone, as JSON
        text = json.dumps(cost_record(args.clock, base_seconds), indent=1) + "\n"
    else:
        design = tuple(args.design) if args.design else None
        text, table = report(args.parts, args.clock, base_seconds, design)
        if args.table:
            table.to_csv(args.table, index=False)
    args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
