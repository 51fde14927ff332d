"""The summary's text on the claims over bases: the Findings' paragraph and table, and the
section with every comparison over bases, every base and the mismatch by position."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import pandas as pd

from zgain.core.runs import Tier
from zgain.report.context import Context
from zgain.report.render.markdown import (
    LABELS,
    MARKS,
    NOT_SEPARABLE,
    blocks,
    caption,
    fmt,
    fmt_stats,
    frame_table,
    markdown_table,
    percent,
    pivot,
    sigma_cells,
)
from zgain.results.analysis.controller import RATE_TOLERANCE
from zgain.results.analysis.procedure import PROCEDURE_METRICS, mean_over_bases
from zgain.results.load.bases import BaseRuns, replicates
from zgain.results.registry import BASES, MISMATCH, PROCEDURE
from zgain.stats.power import POWER
from zgain.stats.rule import BETTER, EQUIVALENT, UNDETERMINED, WORSE


def _replicates(bases: Sequence[BaseRuns]) -> str:
    """`base 0 × 2 seeds; bases 1, 2, 3, 4 × 1 seed`: each tier's bases and seeds per base."""
    tiers = {}
    for base in bases:
        n = len(next(iter(base.results.values())).seeds)
        tiers.setdefault(base.tier, []).append((base.seed, n))
    parts = []
    for members in tiers.values():
        seeds = sorted({n for _, n in members})
        k = "/".join(map(str, seeds))
        names = ", ".join(str(s) for s, _ in members)
        parts.append(f"base{'s' if len(members) > 1 else ''} {names} × {k} seed{'s' * (k != '1')}")
    return "; ".join(parts)


def procedure_sentence(
    table: pd.DataFrame, bases: Sequence[BaseRuns], rate: float, confidence: float
) -> str:
    """The Findings' paragraph on the procedure: what the comparisons over bases at `rate`
    say against the first comparison's baseline, per metric (how many above it, and the count
    of each verdict), and the smallest difference the design detects; the values are in
    `procedure_findings_table`."""
    screening = [str(base.seed) for base in bases if base.tier is Tier.SCREENING]
    bases = replicates(bases)
    at = table[table["rate"] == rate]
    if at.empty or len(bases) < 2:
        return ""
    baseline = at["b"].iloc[0]
    said = []
    for metric in PROCEDURE_METRICS:
        ours = at[(at["b"] == baseline) & (at["metric"] == metric)]
        counts = ours["verdict"].value_counts()
        above = ours[ours["verdict"] == BETTER]["a"].tolist()
        head = f"{', '.join(above)} above {baseline}" if above else f"none above {baseline}"
        tally = ", ".join(
            f"{counts.get(v, 0)} {v}" for v in (WORSE, EQUIVALENT, UNDETERMINED) if counts.get(v)
        )
        said.append(f"{head} on {LABELS[metric]} ({tally})")
    capture = at[at["metric"] == PROCEDURE_METRICS[0]]
    detectable = fmt(float(capture["detectable"].median()))
    bound = fmt(float(capture["detectable_upper"].median()))
    return (
        f"**Over bases** ({len(bases)}: {_replicates(bases)}; the screening base "
        f"{', '.join(screening)}, which chose the contested group, is not a replicate), "
        f"a − b at C = {rate!r}, "
        f"{percent(confidence)} t over bases, the rule's verdict: {'; '.join(said)}. Δ capture "
        f"detectable at {percent(POWER)} power: {detectable} at the estimated σ, {bound} at its "
        f"upper bound ([all](tables/{PROCEDURE.name}.csv))."
    )


def procedure_findings_table(
    table: pd.DataFrame, rate: float, facts: pd.DataFrame, metric: str
) -> str:
    """The Findings' table over bases at `rate`: per comparison a's mean `metric` over the
    confirming bases (`facts`: tables/bases.csv), Δ capture and Δ G^marg with their intervals
    and verdict symbols, and σ_B, σ_W of Δ capture."""
    at = table[table["rate"] == rate]
    means = mean_over_bases(facts, rate)

    def sigmas(row: Mapping) -> str:
        pair = sigma_cells(row)
        return NOT_SEPARABLE if pair[0] == NOT_SEPARABLE else ", ".join(pair)

    text = lambda r: f"{fmt_stats(r, signed=True)} {MARKS[r['verdict']]}"  # noqa: E731
    rows = pivot(at, ["a", "b"], "metric", text, PROCEDURE_METRICS, label=" − ".join)
    spreads = pivot(at, ["a", "b"], "metric", sigmas, PROCEDURE_METRICS[:1], "n/a, n/a")
    rows = [[*row, spread] for row, (_, spread) in zip(rows, spreads, strict=True)]
    firsts = [a for a, _ in dict.fromkeys(zip(at["a"], at["b"], strict=True))]
    values = [fmt(means.get(a, math.nan)) for a in firsts]
    rows = [[row[0], value, *row[1:]] for row, value in zip(rows, values, strict=True)]
    header = ["a − b", f"{LABELS.get(metric, metric)} of a over bases"]
    header += [*(f"Δ {LABELS[m]}" for m in PROCEDURE_METRICS), "σ_B, σ_W"]
    return markdown_table(header, rows)


def procedure_section(ctx: Context) -> list[str]:
    """The summary's section on the procedure: the next tables, every comparison over bases
    (tables/procedure.csv), every base (tables/bases.csv) and the mismatch by position."""
    table, bases_frame = ctx.tables[PROCEDURE.name], ctx.tables[BASES.name]
    sigmas = [sigma_cells(row) for _, row in table.iterrows()]
    hidden = ["replicates", "tost_low", "tost_high", "p", "sigma_b_upper", "sigma_w_upper"]
    shown = (
        table.assign(sigma_b=[b for b, _ in sigmas], sigma_w=[w for _, w in sigmas])
        .drop(columns=hidden)
        .rename(columns={"n": "bases", "detectable": f"detectable at {percent(POWER)}"})
        .rename(columns={"detectable_upper": "at σ bound"})
    )
    level = percent(ctx.settings.confidence)
    facts = bases_frame.assign(sha256=bases_frame["sha256"].str[:12])
    procedure = caption(
        f"a − b per replicate (base, seed), moved to exactly C along the "
        f"screening base's frontier slope, runs >{RATE_TOLERANCE:.0%} off C left out; mean of "
        f"the per-base means with a {level} t-interval over bases (b − 1 df); σ_B, σ_W by the "
        f"method of moments, each with its one-sided {level} upper bound (≤; a σ_B clipped at "
        f"0 shows as 0; {NOT_SEPARABLE}: one seed per base, σ_B and σ_W not told apart); "
        f"detectable at {percent(POWER)} at the estimated σ, and at σ_B's bound (the spread of "
        "the per-base means); the verdict by the report's one rule with the per-base means as "
        "replicates, Holm over each rate and metric "
        "([method](../docs/method.md#claims-about-the-procedure))"
    )
    every_base = caption(
        "Every base: its tier, checkpoint sha256 (first 12 hex), test excess over the oracle "
        "(nats/seq), and each contested variant's mean capture (G^marg without an oracle) at C"
    )
    heading = "## Over bases: claims about the procedure"
    parts = [heading, procedure, frame_table(shown), every_base, frame_table(facts)]
    return [*blocks(*parts), "", *mismatch_section(ctx.tables[MISMATCH.name])]


def mismatch_section(table: pd.DataFrame) -> list[str]:
    """The next table: the oracle's b*_t and each base's mean b_t − b*_t by position
    (tables/mismatch.csv); nothing without a per-token oracle."""
    if table.empty:
        return []
    header, rows = mismatch_rows(table)
    text = caption(
        "Where each base departs from the oracle: mean b*_t and each base's mean b_t − b*_t "
        "(nats) by target position on the test split ([mismatch](../docs/method.md#mismatch), "
        "tables/mismatch.csv)"
    )
    return [*blocks(text, markdown_table(header, rows)), ""]


def mismatch_rows(table: pd.DataFrame) -> tuple[list[str], list[list[str]]]:
    """The summary's view: a header of positions, the oracle's mean b*_t (the same split for
    every base: the first base's), then each base's mean b_t − b*_t."""
    positions = sorted(table["position"].unique())
    header = ["", *(f"t = {p}" for p in positions)]
    first = table[table["base"] == table["base"].iloc[0]].set_index("position")
    rows = [["oracle b*_t", *(f"{first.loc[p, 'oracle_surprisal']:.3f}" for p in positions)]]
    text = lambda r: f"{r['mismatch']:+.3f}"  # noqa: E731
    rows += pivot(
        table, "base", "position", text, positions, label=lambda b: f"base {b}: b_t − b*_t"
    )
    return header, rows
