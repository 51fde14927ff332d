"""The summary's opening `## Findings` (docs/method.md#verdicts) and its sections on the
verdicts: what holds, the verdict table of the headline rate, the rule and scope in a line
each, then every verdict at every rate and the seeds a ±δ interval needs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from zgain.core.runs import rate_label
from zgain.report.context import Context
from zgain.report.render.markdown import (
    LABELS,
    MARKS,
    NOT_SEPARABLE,
    blocks,
    bracket,
    caption,
    fmt,
    frame_table,
    legend,
    listing,
    markdown_table,
    percent,
    pivot,
    plural,
)
from zgain.report.sections.over_bases import procedure_findings_table, procedure_sentence
from zgain.report.sections.plateau import confirming_tier, plateau_sentence
from zgain.report.sections.scope import one_base, world_sentence
from zgain.results.analysis.controller import RATE_TOLERANCE
from zgain.results.analysis.procedure import PROCEDURE_METRICS
from zgain.results.analysis.tables import DECOMPOSITION_PREFIX, ORACLE, SEEDS
from zgain.results.registry import (
    ADJUSTMENT,
    BASES,
    FRONTIER,
    HALF_WIDTHS,
    PLATEAU,
    PLATEAU_CONFIRMING,
    POSITIONS,
    PROCEDURE,
    VERDICTS,
)
from zgain.stats.power import POWER
from zgain.stats.rule import (
    BETTER,
    EQUIVALENT,
    MIN_SEEDS,
    UNDETERMINED,
    WORSE,
    tost_level,
)

POSITION_FIGURE = "figures/information_by_position.png"
RULE_LINK = "[Rule](../docs/method.md#verdicts)"
MORE = {
    "capture": "captures more than",
    "z_information": "carries more z-information than",
    "marginal_gain": "keeps a higher G^marg than",
}
SHOWN = {
    "capture": "is shown to capture more than",
    "z_information": "is shown to carry more z-information than",
    "marginal_gain": "is shown to keep a higher G^marg than",
}
NEEDED = f"n′: replicates for {percent(POWER)} power"


IDENTICAL = "identical"
IDENTICAL_NOTE = (
    "identical: every run of a scored exactly what the same seed of b scored, on every metric "
    "at every rate (one is a rescaling of the other under scale-free control), so Δ is 0 by "
    "construction, whatever the rule's verdict on too few replicates"
)


def sigma_legend(table: str, confidence: float) -> str:
    """The legend of the over-bases table's σ column: what its cells say (one seed per base
    leaves σ_B and σ_W not told apart; otherwise each has its one-sided upper bound)."""
    if NOT_SEPARABLE in table:
        return f"σ_B, σ_W of Δ capture ({NOT_SEPARABLE}: one seed per base)"
    return f"σ_B, σ_W of Δ capture (≤: one-sided {percent(confidence)} upper bound)"


def identical_pair(identical: Mapping[str, str], a: str, b: str) -> bool:
    """Whether variants a and b score the same on every run (`Context.identical`)."""
    return identical.get(a, a) == identical.get(b, b)


def verdict_cell(
    row: Mapping,
    confidence: float,
    *,
    interval: bool = True,
    needed: bool = True,
    identical: bool = False,
) -> str:
    """`Δ [low, high] symbol` of one verdict row (`n′=k` beside an undetermined one); an
    equivalent one shows the (1 − 2α) interval it was decided on, α = 1 − confidence; a pair
    of `identical` variants reads `Δ identical`."""
    text = fmt(row["mean_diff"], signed=True)
    if identical:
        return f"{text} {IDENTICAL}"
    if row["verdict"] == EQUIVALENT and pd.notna(row["tost_low"]):
        tost = percent(tost_level(confidence))
        tost += " " + bracket(row["tost_low"], row["tost_high"], signed=True)
        return f"{text} ≈ {tost}" if interval else f"{text} ≈"
    if interval and pd.notna(row["low"]):
        text += " " + bracket(row["low"], row["high"], signed=True)
    text += f" {MARKS[row['verdict']]}"
    if needed and row["verdict"] == UNDETERMINED and row["replicates_needed"]:
        text += f" n′{'' if str(row['replicates_needed']).startswith('>') else '='}"
        text += str(row["replicates_needed"]).replace(" ", "")
    return text


def comparison_rows(verdicts: pd.DataFrame, rate: float, metric: str) -> pd.DataFrame:
    at = verdicts[(verdicts["rate"] == rate) & (verdicts["metric"] == metric)]
    return at.set_index(["a", "b"])


def robust_sentence(
    verdicts: pd.DataFrame,
    headline: float,
    baseline: str,
    metric: str,
    identical: Mapping[str, str] | None = None,
) -> str:
    """What holds: which variants beat the baseline on `metric` at the headline rate (usually
    none), the count of each verdict, and whether any beats it at another rate. With an
    undetermined comparison, none beating it is "none is shown to": its verdict is open."""
    ours = verdicts[(verdicts["b"] == baseline) & (verdicts["metric"] == metric)]
    pairs = zip(ours["a"], ours["b"], strict=True)
    same = pd.Series([identical_pair(identical or {}, a, b) for a, b in pairs], ours.index, bool)
    twins = sorted(set(ours.loc[same, "a"]))
    ours = ours.loc[~same]
    at = ours[ours["rate"] == headline]
    if at.empty:
        return f"No variant besides {baseline} is listed: there is nothing to compare."
    counts = at["verdict"].value_counts()
    better = at[at["verdict"] == BETTER]["a"].tolist()
    elsewhere = ours[(ours["rate"] != headline) & (ours["verdict"] == BETTER)]
    name = LABELS[metric]
    tally = (
        f"{counts.get(WORSE, 0)} worse, {counts.get(EQUIVALENT, 0)} equivalent within "
        f"±{fmt(float(at['delta'].iloc[0]), 2)}, {counts.get(UNDETERMINED, 0)} undetermined"
    )
    if better:
        head = f"At C = {rate_label(headline)}, {', '.join(better)} {MORE[metric]} {baseline}"
    else:
        verb = SHOWN[metric] if counts.get(UNDETERMINED, 0) else MORE[metric]
        head = f"At C = {rate_label(headline)} no variant {verb} {baseline}"
    others_open = (ours[ours["rate"] != headline]["verdict"] == UNDETERMINED).any()
    other = (
        ("nor is any shown to at another rate" if others_open else "nor does any at another rate")
        if elsewhere.empty
        else "at other rates: "
        + ", ".join(f"{r['a']} (C = {rate_label(r['rate'])})" for _, r in elsewhere.iterrows())
    )
    twin = f"; {', '.join(twins)} {IDENTICAL} to {baseline}" if twins else ""
    return f"{head} ({plural(len(at), 'comparison')} on {name}: {tally}{twin}); {other}."


def net_gain_sentence(decompositions: Sequence[pd.DataFrame]) -> str:
    """The sign of net gain = gross − KL over every (variant, rate) cell of the decomposition
    tables (the variants' rows only)."""
    cells = [t[(t["metric"] == "net_gain") & (t["kind"] == SEEDS)] for t in decompositions]
    net = pd.concat(cells) if cells else pd.DataFrame()
    if net.empty:
        return ""
    negative = int((net["mean"] < 0).sum())
    if negative == len(net):
        return (
            f"Net gain (gross − KL) is negative in all {len(net)} variant × rate cells: no CVAE "
            "codes y better than the base once the rate is paid."
        )
    return f"Net gain (gross − KL) is negative in {negative} of {len(net)} variant × rate cells."


def negative_information(
    frontier: pd.DataFrame, by_position: pd.DataFrame, headline: float, token_oracle: bool
) -> str:
    """One sentence: the variants with negative mean I^θ, at which rates (per variant: "every
    rate" only for a variant negative at each rate it was trained at), and where."""
    z = frontier[frontier["metric"] == "z_information"]
    negative = z[z["mean"] < 0]
    if negative.empty:
        return ""
    names = list(dict.fromkeys(negative["variant"]))
    groups: dict[str, list[str]] = {}
    for name in names:
        found = sorted(set(negative.loc[negative["variant"] == name, "rate"]))
        every = len(found) == z.loc[z["variant"] == name, "rate"].nunique()
        label = "every rate" if every else "C = " + ", ".join(rate_label(r) for r in found)
        groups.setdefault(label, []).append(name)
    clauses = [
        f"{listing(members)} {'has' if len(members) == 1 else 'have'} negative I^θ ({label})"
        for label, members in groups.items()
    ]
    text = "; ".join(clauses) + ": the posterior z makes the decoder worse"
    mine = by_position[by_position["variant"].isin(names) & (by_position["mean"] < 0)]
    if not mine.empty and token_oracle:
        positions = sorted(set(mine["position"]))
        oracle = by_position[(by_position["variant"] == ORACLE)]
        oracle = oracle[oracle["position"].isin(positions)]["mean"]
        text += (
            f" on t = {min(positions)}–{max(positions)} (C = {rate_label(headline)}), where "
            f"i*_t ≤ {fmt(float(oracle.max()))}"
        )
    return text + f" ([figure]({POSITION_FIGURE}))."


def findings_table(ctx: Context) -> str:
    """Rows: the declared comparisons (a variant alone: against the baseline); columns: a's
    adjusted value at the headline rate, each tested metric's Δ with interval and verdict there,
    then the other rates' verdict symbols."""
    verdicts, adjustment = ctx.tables[VERDICTS.name], ctx.tables[ADJUSTMENT.name]
    headline = ctx.headline
    metrics, baseline = ctx.coverage.verdict_metrics, ctx.settings.baseline
    first, second = metrics
    here = {m: comparison_rows(verdicts, headline, m) for m in metrics}
    others = [r for r in sorted(set(verdicts["rate"])) if r != headline]
    value = adjustment[(adjustment["rate"] == headline) & (adjustment["metric"] == first)]
    value = value.set_index("variant")["mean"]
    header = [
        f"a (− {baseline})",
        LABELS[first],
        f"Δ {LABELS[first]}",
        f"Δ {LABELS[second]}",
        *(f"C = {rate_label(r)}" for r in others),
    ]
    rows = []
    for a, b in here[first].index:
        cells = [a if b == baseline else f"{a} − {b}", fmt(value.get(a, float("nan")))]
        same = identical_pair(ctx.identical, a, b)
        level = ctx.settings.confidence
        cells += [
            verdict_cell(here[m].loc[(a, b)], level, needed=False, identical=same) for m in metrics
        ]
        for rate in others:
            at = [comparison_rows(verdicts, rate, m) for m in metrics]
            marks = "".join(MARKS[t.loc[(a, b), "verdict"]] for t in at)
            cells.append(IDENTICAL if same else marks)
        rows.append(cells)
    return markdown_table(header, rows)


def findings_lines(ctx: Context) -> list[str]:
    """The `## Findings` section (without the blank line before it): what holds, then the
    verdict table, then what it holds on and by which rule, in that order."""
    params, tables, headline, bases = ctx.params, ctx.tables, ctx.headline, ctx.bases
    verdicts, report, metrics = tables[VERDICTS.name], ctx.settings, ctx.coverage.verdict_metrics
    procedure = (
        procedure_sentence(tables[PROCEDURE.name], bases, headline, report.confidence)
        if PROCEDURE.name in tables
        else ""
    )
    seeds, few = plural(ctx.n_seeds, "seed"), ""
    if ctx.n_seeds < MIN_SEEDS:
        few = f"with {seeds} none is decided (the rule needs {MIN_SEEDS})"
    # with too few screening seeds its verdicts say nothing; the procedure's then speak
    decided = ctx.n_seeds >= MIN_SEEDS or not procedure
    held = (
        robust_sentence(verdicts, headline, report.baseline, metrics[0], ctx.identical)
        if decided
        else ""
    )
    decompositions = [t for name, t in tables.items() if name.startswith(DECOMPOSITION_PREFIX)]
    opening = held  # the answer first; a side fact such as the net gain after the tables
    if few and not procedure:
        undecided = (
            f"With {seeds} every screening verdict is undetermined (the rule needs {MIN_SEEDS})."
        )
        opening = f"{undecided}\n{opening}"
    parts = []
    if procedure:  # the claims about the procedure come before the screening tier's table
        first = ctx.coverage.metrics(PROCEDURE_METRICS)[0]
        at = tables[PROCEDURE.name], headline, tables[BASES.name], first
        table = procedure_findings_table(*at)
        sigmas = sigma_legend(table, report.confidence)
        parts += [procedure, table, f"*{legend(report.confidence)}; {sigmas}.*"]
    if procedure and not decided:
        parts.append(
            "The [verdict table](#verdicts-at-every-rate) is the screening tier's: every variant "
            f"on base {bases[0].seed}, over CVAE seeds" + (f"; {few}." if few else ".")
        )
    elif not verdicts.empty:
        parts.append(findings_table(ctx))
        parts.append(
            f"*Δ = a − b at C = {rate_label(headline)} ({percent(report.confidence)} interval); "
            f"other rates as symbols ({LABELS[metrics[0]]}, {LABELS[metrics[1]]}). "
            f"{legend(report.confidence)}.*"
        )
    parts.append(net_gain_sentence(decompositions))
    scope = world_sentence(params.data, ctx.results.split_value("n_examples"))
    parts += [rule_sentence(ctx), f"{scope} {one_base(params)}" if not procedure else scope]
    if (plateau := tables.get(PLATEAU.name)) is not None:
        confirming, tier = tables.get(PLATEAU_CONFIRMING.name), confirming_tier(params)
        parts.append(plateau_sentence(plateau, headline, confirming=confirming, tier=tier))
    parts.append(
        negative_information(
            tables[FRONTIER.name], tables[POSITIONS.name], headline, ctx.coverage.token_oracle
        )
    )
    return ["## Findings", *(["", opening] if opening else []), "", *blocks(*parts)]


def rule_sentence(ctx: Context) -> str:
    """The rule in one line: the comparisons, the values, the runs left out, the family."""
    report, tables, metrics = ctx.settings, ctx.tables, ctx.coverage.verdict_metrics
    n_comparisons = len(tables[VERDICTS.name]) // max(len(ctx.by_rate) * len(metrics), 1)
    family = f"the {n_comparisons} screening comparisons"
    if PROCEDURE.name in tables and not tables[PROCEDURE.name].empty:
        procedure = tables[PROCEDURE.name]
        per_family = procedure.groupby(["rate", "metric"], sort=False).size()
        family += f" (over bases: the {int(per_family.max())} of one rate and metric)"
    excluded = int(tables[ADJUSTMENT.name].query(f"metric == '{metrics[0]}'")["excluded"].sum())
    alpha = report.alpha
    deltas = ", ".join(f"{LABELS[m]} {fmt(report.deltas[m], 2)}" for m in metrics)
    return (
        f"*{RULE_LINK}: each variant − {report.baseline} (and `report.pairs`) at exactly "
        f"C, jackknife intervals, {excluded} runs >{RATE_TOLERANCE:.0%} off C left out; ≈ if the "
        f"{percent(report.tost_level)} interval is inside ±δ ({deltas}), else ▲/▼ if "
        f"Holm over {family} rejects at {percent(alpha)}.*"
    )


def half_width_section(ctx: Context) -> list[str]:
    """The next table: each variant's adjusted rank metric's interval half-width at the headline
    rate and the seeds a ±target half-width would need given its sd."""
    table, metric = ctx.tables[HALF_WIDTHS.name], ctx.coverage.rank_metric
    if table.empty:
        return []
    name = "capture" if metric == "capture" else "z-information"
    rate, target = float(table["rate"].iloc[0]), float(table["target"].iloc[0])
    shown = table.drop(columns=["rate", "target"]).assign(
        seeds_needed=table["seeds_needed"].replace("", "n/a")
    )
    heads = {"mean": f"`{metric}` adjusted", "n": "seeds", "half_width": "half-width"}
    heads["seeds_needed"] = f"seeds for ±{target:g}"
    return blocks(
        f"## Seeds for a ±{target:g} {name} interval at the headline rate",
        caption(
            f"{name.capitalize()} adjusted to C = {rate_label(rate)}: the half-width of its "
            "interval",
            ctx.method,
            f"Seeds for ±{target:g}: the smallest n with "
            f"t_{{{0.5 + ctx.settings.confidence / 2:g}, n−1}} · "
            f"sd/√n ≤ {target:g} at the observed sd (the equivalence margin of {name}).",
        ),
        frame_table(shown.rename(columns=heads)),
    )


def verdicts_section(ctx: Context) -> list[str]:
    """The next tables: every declared comparison's verdict at every rate, one
    table per tested metric (the rule and family of the Findings; tables/verdicts.csv)."""
    verdicts, confidence = ctx.tables[VERDICTS.name], ctx.settings.confidence
    same = ctx.identical
    pairs = zip(verdicts["a"], verdicts["b"], strict=True)
    twins = any(identical_pair(same, a, b) for a, b in pairs)
    rates = sorted(set(verdicts["rate"]))
    if not rates:
        return []
    parts = ["## Verdicts at every rate"]
    for i, metric in enumerate(ctx.coverage.verdict_metrics):
        mine = verdicts[verdicts["metric"] == metric]

        def text(r: Mapping) -> str:
            return verdict_cell(r, confidence, identical=identical_pair(same, r["a"], r["b"]))

        rows = pivot(mine, ["a", "b"], "rate", text, rates, label=" − ".join)
        title = f"Δ {LABELS[metric]} (a − b) at each target rate"
        note = (
            f"Rule of the Findings; {legend(confidence)} ({NEEDED}). Intervals: "
            f"{percent(confidence)}, jackknife. The {percent(tost_level(confidence))} TOST "
            "interval, p and Holm p of each cell are in tables/verdicts.csv."
            + (f" {IDENTICAL_NOTE[0].upper()}{IDENTICAL_NOTE[1:]}." if twins else "")
            if i == 0
            else f"As Table ⟦{VERDICTS.name}⟧."
        )
        parts.append(caption(title, ctx.method, note, key=VERDICTS.name if i == 0 else ""))
        parts.append(markdown_table(["a − b", *(f"C = {rate_label(r)}" for r in rates)], rows))
    return [*blocks(*parts), ""]
