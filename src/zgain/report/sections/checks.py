"""The summary's checks and its figures: the rates reached, the damage check of the likelihood
objectives, the equal-rate twins (docs/method.md#comparison-at-equal-rate), and the figures
with their captions."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from zgain.core.runs import rate_label
from zgain.report.context import Context, Coverage
from zgain.report.render.markdown import (
    blocks,
    caption,
    column_header,
    fmt,
    fmt_stats,
    listing,
    markdown_table,
    percent,
    pivot,
    plural,
)
from zgain.results.analysis.controller import (
    RATE_TOLERANCE,
    beta_bounds,
    cause_sentence,
)
from zgain.results.analysis.damage import DAMAGE_THRESHOLD, LIKELIHOOD_TERM
from zgain.results.frontier import TWIN_METRICS, twin_variants
from zgain.results.registry import FRONTIER, RATE_CHECK, TWINS, VERDICTS
from zgain.stats.rule import BETTER, EQUIVALENT, WORSE

FIGURES_DIR = "figures"


def rate_check_section(ctx: Context) -> list[str]:
    """The next table: achieved test KL beside each target, and the runs more than
    RATE_TOLERANCE off with the cause of each (docs/method.md#why-a-run-misses-its-rate;
    nothing when no run targets a rate)."""
    misses, frontier = ctx.misses, ctx.tables[FRONTIER.name]
    if not misses.targeted:
        return []
    kl = frontier[frontier["metric"] == "kl"]
    rates = list(dict.fromkeys(kl["rate"]))
    rows = pivot(kl, "variant", "rate", fmt_stats)
    tolerance = f"{RATE_TOLERANCE:.0%}"
    text = caption(
        "Achieved test `kl` against the target rate C (nats per sequence)",
        ctx.method,
        f"Every run's own value and its relative error are in "
        f"tables/{RATE_CHECK.name}.csv; a run more than {tolerance} from its target is "
        "flagged.",
    )
    table = markdown_table(["variant", *(f"C = {rate_label(r)}" for r in rates)], rows)
    flagged = misses.flagged
    if flagged.empty:
        return blocks(
            "## Rates reached",
            text,
            table,
            f"All {misses.targeted} runs reached their target within {tolerance}.",
        )
    missed = (
        f"**{len(flagged)} of {misses.targeted} runs are more than {tolerance} off their "
        f"target**; each is left out of its rate's adjusted values and verdicts "
        f"(their KL in tables/{RATE_CHECK.name}.csv): {grouped_runs(flagged)}."
    )
    causes = [
        f"in {plural(len(rows), 'run')} ({run_labels(rows)}), "
        + cause_sentence(cause, beta_bounds(ctx.params), RATE_TOLERANCE)
        for cause, rows in misses.causes.items()
    ]
    why = (
        "Why, from each run's rate controller where its training ended (the last β and the "
        "training batches' KL average, in the table's CSV; "
        "docs/method.md#why-a-run-misses-its-rate): " + "; ".join(causes) + "."
    )
    return blocks("## Rates reached", text, table, missed, why)


def run_labels(rows: pd.DataFrame) -> str:
    """How many runs of each variant the rate-check rows hold: `a ×3, b ×1`."""
    counts = rows["variant"].value_counts(sort=False)
    return ", ".join(f"{variant} ×{n}" for variant, n in counts.items())


def grouped_runs(rows: pd.DataFrame) -> str:
    """The runs of rate-check rows by variant and rate: `a: C = 0.25 seeds 0, 2; C = 1.0 seed 1`."""
    parts = []
    for variant, mine in rows.groupby("variant", sort=False):
        cells = []
        for rate, at in mine.groupby("rate", sort=True):
            seeds = sorted(int(s) for s in at["seed"])
            word = "seed" if len(seeds) == 1 else "seeds"
            cells.append(f"C = {rate_label(rate)} {word} {', '.join(map(str, seeds))}")
        parts.append(f"{variant}: {', '.join(cells)}")
    return "; ".join(parts)


def twin_section(ctx: Context) -> list[str]:
    """The next table: the check that R_mean and R_dist = R_mean / N coincide at equal rate; its
    conclusion is the pair's verdicts by the one rule (the verdict table's rows of the pair)."""
    twins, pair = ctx.tables.get(TWINS.name), twin_variants(ctx.weights)
    if twins is None or pair is None:
        return []
    first, second = pair
    rows = pivot(
        twins, "rate", "metric", lambda r: fmt_stats(r, signed=True), TWIN_METRICS, label=rate_label
    )
    return blocks(
        f"## Equal-rate check: {first} against {second}",
        caption(
            f"Seed-paired difference {first} − {second} at each target rate (nats/seq)",
            ctx.method,
            f"{second} is {first} divided by the normalizer N (R_dist = R_mean / N). Training "
            "divides each by its own value on the frozen base ([scale-free control]"
            "(../docs/method.md#scale-free-control)), so the two are one objective and train "
            "to the same parameters up to float rounding (tests/cvae/test_scale_free.py): every "
            "difference here must be 0 up to that rounding (largest |mean Δ| here: "
            f"{float(twins['mean'].abs().max()):.1e} nats/seq). Raw values; the conclusion "
            "below is the pair's verdicts.",
        ),
        markdown_table(["C", *(f"Δ {column_header(m)}" for m in TWIN_METRICS)], rows),
        twin_conclusion(pair, ctx.tables[VERDICTS.name]),
    )


def twin_conclusion(pair: tuple[str, str], verdicts: pd.DataFrame | None) -> str:
    """Whether the pair coincides at equal rate, by its verdicts (docs/method.md#verdicts)."""
    first, second = pair
    if verdicts is None or verdicts.empty:
        return "No verdict on this pair: it is not a declared comparison."
    ours = verdicts[
        ((verdicts["a"] == first) & (verdicts["b"] == second))
        | ((verdicts["a"] == second) & (verdicts["b"] == first))
    ]
    if ours.empty:
        return "No verdict on this pair: it is not a declared comparison."
    counts = ours["verdict"].value_counts()
    separated = ours[ours["verdict"].isin([BETTER, WORSE])]
    if counts.get(EQUIVALENT, 0) == len(ours):
        return (
            f"By the verdicts, {first} and {second} are equivalent within ±δ at every rate on "
            "every tested metric: at equal rate they coincide, as a pure rescaling (it only "
            "moves β) predicts."
        )
    if not separated.empty:
        where = ", ".join(
            f"{r['metric']} at C = {rate_label(r['rate'])}" for _, r in separated.iterrows()
        )
        return (
            f"The verdicts separate them on {where}: at equal rate the rescaled objective is not "
            "the same problem, which a pure rescaling would be (read the rates reached above "
            "first)."
        )
    return (
        f"By the verdicts, {counts.get(EQUIVALENT, 0)} of {len(ours)} (rate, metric) cells are "
        "equivalent within ±δ and none separates; the rest are undetermined (replicates needed "
        "in tables/verdicts.csv)."
    )


CAPTION_ORDER = ("z_information", "capture", "marginal_gain", "probe_accuracy")
"""The frontier figure's panels in the order of its caption (zgain.figures.draw)."""


def figure_captions(coverage: Coverage) -> dict[str, str]:
    """Each figure's caption, naming only the references the data has (Coverage);
    `{runs}` and `{method}` are filled in by `figure_section`."""
    panels = [f"`{m}`" for m in CAPTION_ORDER if m in coverage.panels()]
    dashed = ["the oracle's mean I* (`oracle_info`)", "capture 1"] if coverage.oracle else []
    frontier = (
        f"The frontier: {listing(panels)} against the achieved test `kl`, one curve per variant "
        "through its seed means at each target rate (a colour and marker each; dashed: the "
        "additive variants), every run a small point ({runs}); a value far from the rest (past "
        "Tukey's fences) is an arrow at the axis edge with its value; a variant identical to "
        "another is drawn with open markers in short dashes over it; in the top group earlier "
        "curves are drawn wider, so coinciding curves nest"
    )
    frontier += f"; dotted: {listing(dashed, serial=True)}" if dashed else ""
    frontier += (
        "; dash-dot-dotted: the Bayes ceiling `probe_ceiling`; dash-dotted: the x-only floor "
        "`probe_floor`"
        if coverage.strategies
        else ""
    )
    oracle_bar = "; the oracle bar beside (`oracle_marginal_gain` + I*)" if coverage.oracle else ""
    oracle_tokens = (
        ", beside the oracle's `oracle_token_info` (dotted)" if coverage.token_oracle else ""
    )
    return {
        "frontier.png": frontier + ".",
        "frontier_top.png": (
            "The frontier of the top group alone, on its own scale: the variants whose capture "
            "adjusted to the headline rate lies within 3δ of the best (a view; the verdicts "
            "decide), as in the figure above ({runs})."
        ),
        "forest.png": (
            "Each declared comparison's difference a − b at every target rate with {interval}, "
            "coloured by its verdict (the rule of the Findings); shaded: ±δ, inside which a "
            "difference is equivalent; one axis for every rate, holding ±1.5δ and every "
            "difference within Tukey's fences with its whole interval; a difference past them is "
            "an arrow at the edge labelled with its value and interval."
        ),
        "forest_bases.png": (
            "The claims over bases (`tables/procedure.csv`): each comparison's mean difference "
            "over the confirming bases with its interval, coloured by its verdict; shaded: ±δ; "
            "one axis per metric, holding ±1.5δ and every interval."
        ),
        "gain_decomposition.png": (
            "At the headline rate, gross gain per variant as stacked bars, `marginal_gain` "
            "(hatched) + `z_information` (solid), {method}; positive parts stack up and negative "
            "parts down from 0; the dot is each bar's total `gross_gain` (with its interval where "
            "there are several seeds); a second panel draws `marginal_gain` alone on its own "
            f"scale; a bar past the axis is cut with an arrow giving its end{oracle_bar}."
        ),
        "information_by_position.png": (
            "At the headline rate, mean `token_z_information` by target position, one stemmed "
            f"marker per variant side by side at each position{oracle_tokens}; {{method}}; error "
            "bars (only with several seeds): the interval over the per-seed position means; a "
            "value far from the rest is an arrow at the edge."
        ),
        "learning_curves.png": (
            "At the headline rate, `val_z_information` at each validated step per variant, "
            "each line {seeds_line} per variant (no interval; a curve far from the others by its "
            "last value leaves the axis with an arrow), beside the oracle's mean "
            "I* (dotted); shaded: the plateau rule's window (the last quarter, or the quarter "
            "before the rate's exact penalty when that starts late), whose change the plateau "
            "table (tables/plateau.csv) gives per variant and for the top group."
        ),
        "learning_curves_confirming.png": (
            "The confirming tier's runs (the claims over bases rest on them): `val_z_information` "
            "at each validated step per contested variant, each line the mean over the "
            "confirming replicates (no interval), beside the oracle's mean I* (dotted); shaded: "
            "the plateau rule's window, whose change tables/plateau_confirming.csv gives."
        ),
    }


def figure_section(ctx: Context, names: Sequence[str]) -> list[str]:
    """The figures with their captions."""
    seeds, captions = plural(ctx.n_seeds, "seed"), figure_captions(ctx.coverage)
    runs = f"{seeds} per variant, each run its own point: no interval"
    interval = f"its {percent(ctx.settings.confidence)} jackknife interval over {seeds} per variant"
    interval = interval if ctx.n_seeds > 1 else "no interval (one seed per variant)"
    lines = ["## Figures", ""]
    for number, name in enumerate(names, 1):
        line = "one seed's curve" if ctx.n_seeds == 1 else f"the mean over {seeds}"
        text = captions[name].format(
            method=ctx.method, runs=runs, interval=interval, seeds=seeds, seeds_line=line
        )
        image = f"![{Path(name).stem}]({FIGURES_DIR}/{name})"
        lines += [image, "", f"*Figure {number}.* {text}", ""]
    return lines


def damage_sentences(damage: pd.DataFrame) -> list[str]:
    """One line per likelihood objective of a `damage_table` (zgain.results.analysis.damage):
    damaged, not damaged, or undefined; one line saying no check applies when it has no row."""
    if damage.empty:
        return [
            f"No variant is a likelihood objective (weights only `{LIKELIHOOD_TERM}`), so no "
            "damage check applies."
        ]
    lines = []
    for _, row in damage.iterrows():
        variant = row["variant"]
        if row["damaged"] is None or pd.isna(row["damaged"]):
            lines.append(f"{variant}: `marginal_gain` is undefined, the damage check cannot run.")
        elif row["damaged"]:
            lines.append(
                f"**damaged**: {variant} is a likelihood objective (weights only "
                f"`{LIKELIHOOD_TERM}`) yet its `marginal_gain` is {fmt_stats(row)} nats/seq, below "
                f"{fmt(DAMAGE_THRESHOLD, 2)}: fine-tuning cost likelihood. It started at the base "
                "(G^marg = 0) and trains on the likelihood itself, so part of its I^θ = M − L may "
                "only win back what fine-tuning lost from M."
            )
        else:
            lines.append(
                f"{variant} is a likelihood objective and keeps `marginal_gain` = "
                f"{fmt_stats(row)} nats/seq ≥ {fmt(DAMAGE_THRESHOLD, 2)}: not damaged."
            )
    return lines
