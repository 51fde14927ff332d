"""The summary's opening `## Findings`, generated from the verdicts (docs/method.md#verdicts).

One sentence names the world the findings hold on; then, per target rate, the verdicts in plain
sentences (separations one by one, equivalences and undetermined comparisons grouped), the
headline numbers with their intervals, negative z-information explained per target position,
and the command that reruns the study on another world. Every number comes from a table.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from zgain.core.runs import rate_label
from zgain.params import DataParams, PairsParams, Params
from zgain.report.adjust import ADJUSTED_METRICS
from zgain.report.commentary import fmt, fmt_stats
from zgain.report.coverage import Coverage
from zgain.report.loading import EvalResults
from zgain.report.markdown import markdown_table
from zgain.report.sections import caption, one_base
from zgain.report.tables import ORACLE, information_by_position
from zgain.report.verdicts import (
    ALPHA,
    BETTER,
    EQUIVALENT,
    MIN_SEEDS,
    UNDETERMINED,
    WORSE,
)

VERDICT_TABLE, HALF_WIDTH_TABLE, ADJUSTMENT_TABLE = "verdicts", "half_widths", "adjustment"
METHOD_LINK = "[docs/method.md#verdicts](../docs/method.md#verdicts)"
FRONTIER_FIGURE = "figures/frontier.png"
NAMES = {"capture": "capture", "z_information": "I^θ", "marginal_gain": "G^marg"}
VERBS = {
    "capture": ("captures more than", "captures less than"),
    "z_information": ("carries more z-information I^θ than", "carries less z-information I^θ than"),
    "marginal_gain": ("keeps a higher marginal gain G^marg than", "keeps a lower G^marg than"),
}
ANOTHER_NOISE = 0.05  # the rerun example's noise when this world has none
OTHER_PRIOR = {"uniform": "x_dependent", "x_dependent": "uniform"}


def world_sentence(data: DataParams | PairsParams, n_test: float) -> str:
    """The world the findings hold on: the data block of params."""
    if isinstance(data, PairsParams):
        return (
            f"These findings hold on the pairs of `{data.file}`, split by "
            f"`{data.key_column or data.x_column}` (seed {data.seed}); N = {fmt(n_test, 0)} test "
            "examples."
        )
    return (
        f"These findings hold on one synthetic world: K = {len(data.transforms)} strategies "
        f"({', '.join(data.transforms)}), the `{data.prior}` prior p(s | x) (temperature "
        f"{data.prior_temperature:g}), noise ε = {data.noise:g}, V = {data.vocab_size} content "
        f"tokens, x length {data.length_min}–{data.length_max}; N = {fmt(n_test, 0)} test "
        "examples."
    )


def rerun_command(data: DataParams | PairsParams) -> str:
    """A `dvc exp run` that reruns the whole study on another world: one strategy fewer (when
    K > 2), twice the noise and the other prior; for pairs, another split of the same file."""
    if isinstance(data, PairsParams):
        return f"dvc exp run -S data.seed={data.seed + 1}"
    transforms = data.transforms[:-1] if len(data.transforms) > 2 else data.transforms
    noise = 2 * data.noise if data.noise > 0 else ANOTHER_NOISE
    return (
        f"dvc exp run -S 'data.transforms=[{','.join(transforms)}]' -S data.noise={noise:g} "
        f"-S data.prior={OTHER_PRIOR[data.prior]}"
    )


def separation_text(row: Mapping) -> str:
    more, less = VERBS[row["metric"]]
    verb = more if row["verdict"] == BETTER else less
    diff = fmt_stats({**row, "mean": row["mean_diff"]}, signed=True)
    return f"{row['a']} {verb} {row['b']} ({diff}, Holm-adjusted p = {row['p_holm']:.2g})"


def rate_sentences(verdicts: pd.DataFrame, rate: float) -> list[str]:
    """The verdicts at one rate: each separation, the equivalences grouped, then a count of the
    undetermined ones with the one nearest a verdict."""
    at = verdicts[verdicts["rate"] == rate]
    head = f"At C = {rate_label(rate)}:"
    parts = [separation_text(r) for _, r in at[at["verdict"].isin([BETTER, WORSE])].iterrows()]
    lines = [f"{head} " + "; ".join(parts) + "." if parts else f"{head} no comparison separates."]
    tied = at[at["verdict"] == EQUIVALENT]
    for metric in ADJUSTED_METRICS:
        rows = tied[tied["metric"] == metric]
        if not rows.empty:
            pairs = ", ".join(f"{r['a']} and {r['b']}" for _, r in rows.iterrows())
            delta = fmt(float(rows["delta"].iloc[0]), 2)
            lines.append(f"Equivalent within ±{delta} on {NAMES[metric]}: {pairs}.")
    open_ = at[at["verdict"] == UNDETERMINED]
    if not open_.empty:
        counted = open_[open_["seeds_needed"].str.fullmatch(r"\d+").fillna(False)]
        text = f"Undetermined: {len(open_)} of {len(at)} comparisons"
        if not counted.empty:
            near = counted.iloc[counted["seeds_needed"].astype(int).argmin()]
            text += (
                f"; the nearest to a verdict, {near['a']} − {near['b']} on {NAMES[near['metric']]}"
                f" ({fmt(near['mean_diff'], signed=True)}), would need {near['seeds_needed']} "
                f"seeds for {'a' if near['needed_for'] == 'separation' else 'an'} "
                f"{near['needed_for']} at its observed spread"
            )
        lines.append(text + " (each comparison in tables/verdicts.csv).")
    return lines


def headline_sentence(
    adjustment: pd.DataFrame, headline: float, oracle_info: float, metric: str = "capture"
) -> str:
    """The headline rate's adjusted `metric` per variant, best first (capture, or I^θ when
    there is no oracle)."""
    rows = adjustment[(adjustment["rate"] == headline) & (adjustment["metric"] == metric)]
    rows = rows.sort_values("mean", ascending=False, kind="stable")
    listed = ", ".join(f"{r['variant']} {fmt_stats(r)}" for _, r in rows.iterrows())
    if metric == "capture":
        return (
            f"Headline (C = {rate_label(headline)}, the rate nearest the oracle's I* = "
            f"{fmt(oracle_info)} nats): capture adjusted to C, best first: {listed}."
        )
    return (
        f"Headline (C = {rate_label(headline)}, the middle listed rate: there is no oracle I*): "
        f"z-information I^θ adjusted to C (nats/seq), best first: {listed}."
    )


def negative_information(
    frontier: pd.DataFrame,
    by_rate: Mapping[float, EvalResults],
    confidence: float,
    token_oracle: bool = True,
) -> list[str]:
    """Why z-information is negative where it is: the target positions where the posterior z
    makes the decoder worse (mean i^θ_t < 0, that is Σ_examples i^θ_t < 0), beside i*_t."""
    z = frontier[(frontier["metric"] == "z_information") & (frontier["mean"] < 0)]
    lines = []
    for _, row in z.iterrows():
        positions = information_by_position(by_rate[row["rate"]], confidence, token_oracle)
        oracle = positions[positions["variant"] == ORACLE].set_index("position")["mean"]
        mine = positions[(positions["variant"] == row["variant"]) & (positions["mean"] < 0)]
        where = ", ".join(
            f"t = {t} ({fmt(mean, signed=True)}"
            + (f"; i*_t {fmt(oracle[t])})" if t in oracle else ")")
            for t, mean in zip(mine["position"], mine["mean"], strict=True)
        )
        evidence = (
            f"per target position, the mean i^θ_t is negative at {where}: the posterior z hurts "
            "the decoder on those tokens"
            if where
            else "no single target position has a negative mean i^θ_t: the loss is spread thin"
        )
        lines.append(
            f"At C = {rate_label(row['rate'])}, {row['variant']} has negative z-information "
            f"({fmt_stats(row, signed=True)} nats/seq): its decoder codes y worse with the "
            f"posterior z than with z marginalized; {evidence}."
        )
    return lines


def findings_lines(
    params: Params,
    by_rate: Mapping[float, EvalResults],
    headline: float,
    tables: Mapping[str, pd.DataFrame],
    frontier: pd.DataFrame,
    coverage: Coverage,
) -> list[str]:
    """The `## Findings` section (without the blank line before it)."""
    results = by_rate[headline]
    n_seeds, rates = len(results.seeds), sorted(by_rate)
    verdicts = tables[VERDICT_TABLE]
    method = (
        f"*Verdicts on seed-paired differences of the values adjusted to exactly KL = C, "
        f"Holm-adjusted over the comparisons of one rate and metric at {ALPHA:.0%}, equivalence "
        f"by TOST ({1 - 2 * ALPHA:.0%} interval inside ±δ); rules in {METHOD_LINK}. "
        f"{one_base(params)}*"
    )
    lines = ["## Findings", "", world_sentence(params.data, results.split_value("n_examples"))]
    lines += ["", method, ""]
    if n_seeds < MIN_SEEDS:
        lines.append(
            f"- With {n_seeds} seed{'s' if n_seeds != 1 else ''} every verdict is undetermined: a "
            f"verdict needs at least {MIN_SEEDS} seeds (the seeds are the replicates)."
        )
    if len(rates) == 1:
        lines.append("- One target rate: no frontier to follow, so the values are not adjusted.")
    lines.append(
        "- "
        + headline_sentence(
            tables[ADJUSTMENT_TABLE],
            headline,
            results.split_value("oracle_info"),
            coverage.rank_metric,
        )
    )
    # the headline rate's verdicts first, then the other rates in ascending order
    for rate in [headline, *(r for r in rates if r != headline)]:
        lines.append("- " + " ".join(rate_sentences(verdicts, rate)))
    lines += [
        f"- {line}"
        for line in negative_information(
            frontier, by_rate, params.report.confidence, coverage.token_oracle
        )
    ]
    lines += [
        "- A ranking here is a fact about this world until it is shown on others. To rerun the "
        f"study on another world: `{rerun_command(params.data)}`.",
        "",
        f"![The frontier: each variant's metrics against the achieved KL]({FRONTIER_FIGURE})",
    ]
    return lines


def half_width_section(
    table: pd.DataFrame, confidence: float, method: str, number: int, metric: str = "capture"
) -> list[str]:
    """Table `number`: each variant's adjusted `metric` interval half-width at the headline rate
    and the seeds a ±target half-width would need given its sd."""
    if table.empty:
        return []
    name = "capture" if metric == "capture" else "z-information"
    rate, target = float(table["rate"].iloc[0]), float(table["target"].iloc[0])
    rows = [
        [
            r["variant"],
            fmt(r["mean"]),
            fmt(r["sd"]),
            str(r["n"]),
            fmt(r["half_width"]),
            r["seeds_needed"] or "n/a",
        ]
        for _, r in table.iterrows()
    ]
    header = [
        "variant",
        f"`{metric}` adjusted",
        "sd",
        "seeds",
        "half-width",
        f"seeds for ±{target:g}",
    ]
    return [
        f"## Seeds for a ±{target:g} {name} interval at the headline rate",
        "",
        caption(
            number,
            f"{name.capitalize()} adjusted to C = {rate_label(rate)}: the half-width of its "
            "interval",
            method,
            f"Seeds for ±{target:g}: the smallest n with t_{{{0.5 + confidence / 2:g}, n−1}} · "
            f"sd/√n ≤ {target:g} at the observed sd (the equivalence margin of {name}).",
        ),
        "",
        markdown_table(header, rows),
    ]
