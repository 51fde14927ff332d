"""The generated commentary of the summary: winners, paired verdicts, damaged objectives.

Every sentence is computed from the tables (docs/method.md#uncertainty-over-seeds): a variant
is named best only when its t-interval over seeds excludes the runner-up's mean, and a paired
difference counts only when its t-interval excludes 0.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import pandas as pd

from zgain.cvae.terms import terms_used
from zgain.report.statistics import Interval
from zgain.report.tables import SEEDS

DIGITS = 3
NA = "n/a"
DAMAGE_THRESHOLD = -0.05
"""marginal_gain (nats/seq) below which a likelihood objective counts as damaged."""
LIKELIHOOD_TERM = "sum"
"""The reconstruction term of the likelihood objective (docs/method.md#sum)."""
NOT_SEPARATED = "the seeds do not separate them"
WINNER_METRICS: tuple[tuple[str, str], ...] = (
    ("z_information", "z-information I^θ"),
    ("capture", "capture"),
    ("marginal_gain", "marginal gain G^marg"),
)


def fmt(value: float, digits: int = DIGITS, *, signed: bool = False) -> str:
    """A number with `digits` decimals (`+` when signed), `n/a` when undefined."""
    if not math.isfinite(value):
        return NA
    return f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"


def fmt_stats(row: Mapping, *, signed: bool = False) -> str:
    """`mean [low, high]` when there is an interval, the mean alone otherwise."""
    text = fmt(row["mean"], signed=signed)
    if Interval.of(row).has_interval:
        text += f" [{fmt(row['low'], signed=signed)}, {fmt(row['high'], signed=signed)}]"
    return text


def variant_rows(table: pd.DataFrame, metric: str) -> pd.DataFrame:
    """The variants' cells over seeds for `metric`, defined ones only, best mean first."""
    rows = table[(table["metric"] == metric) & (table["kind"] == SEEDS)]
    rows = rows[rows["mean"].notna()]
    return rows.sort_values("mean", ascending=False, kind="stable")


def winner_sentence(table: pd.DataFrame, metric: str, label: str) -> str:
    """Name the best variant by `metric` only when its interval excludes the runner-up's mean."""
    rows = variant_rows(table, metric)
    if rows.empty:
        return f"No variant has a defined {label} (`{metric}`)."
    first = rows.iloc[0]
    if len(rows) == 1:
        return (
            f"Only {first['variant']} has a defined {label} (`{metric}`), {fmt_stats(first)}: "
            "there is nothing to compare it with."
        )
    second = rows.iloc[1]
    if Interval.of(first).excludes(second["mean"]):
        return (
            f"Best {label} (`{metric}`): **{first['variant']}**, {fmt_stats(first)}; its interval "
            f"excludes the runner-up {second['variant']}'s mean {fmt(second['mean'])}."
        )
    reason = (
        "the leader's interval contains the runner-up's mean"
        if Interval.of(first).has_interval
        else "the leader has no interval (one seed)"
    )
    return (
        f"{label[0].upper()}{label[1:]} (`{metric}`): {NOT_SEPARATED}: the highest means are "
        f"{first['variant']} {fmt_stats(first)} and {second['variant']} {fmt_stats(second)}, and "
        f"{reason}; no variant is named best."
    )


def likelihood_variants(weights: Mapping[str, Mapping[str, float]]) -> list[str]:
    """Variants whose only positively weighted term is `sum`, the likelihood objective."""
    return [variant for variant, terms in weights.items() if terms_used(terms) == {LIKELIHOOD_TERM}]


def damage_sentences(
    decomposition: pd.DataFrame, weights: Mapping[str, Mapping[str, float]]
) -> list[str]:
    """Flag every likelihood objective whose mean marginal_gain is below DAMAGE_THRESHOLD.

    A likelihood objective starts at the base (marginal_gain = 0 at the entangled
    initialization) and trains on the sequence NLL itself, so a clearly negative marginal gain
    (nats/seq) means fine-tuning made the CVAE, z marginalized, a worse model of y given x.
    `weights` maps each listed variant to its params weights (params.cvae.variants).
    """
    candidates = likelihood_variants(weights)
    if not candidates:
        return [
            f"No variant is a likelihood objective (weights only `{LIKELIHOOD_TERM}`), so no "
            "damage check applies."
        ]
    rows = variant_rows(decomposition, "marginal_gain").set_index("variant")
    lines = []
    for variant in candidates:
        if variant not in rows.index:
            lines.append(f"{variant}: `marginal_gain` is undefined, the damage check cannot run.")
            continue
        row = rows.loc[variant]
        if row["mean"] < DAMAGE_THRESHOLD:
            lines.append(
                f"**damaged**: {variant} is a likelihood objective (weights only "
                f"`{LIKELIHOOD_TERM}`) yet its `marginal_gain` is {fmt_stats(row)} nats/seq, below "
                f"{fmt(DAMAGE_THRESHOLD, 2)}: fine-tuning cost likelihood. It starts at the base "
                "(`marginal_gain` = 0 at the entangled initialization) and its objective rewards "
                "the sequence likelihood directly, yet with z marginalized it now codes y worse "
                "than the base it started from. This matters because its `z_information` = M − L "
                "is measured against that degraded z-free code M: part of it may only win back "
                "what fine-tuning lost, so comparing it with the other objectives confounds the "
                "weighting with the damage."
            )
        else:
            lines.append(
                f"{variant} is a likelihood objective and keeps `marginal_gain` = "
                f"{fmt_stats(row)} nats/seq ≥ {fmt(DAMAGE_THRESHOLD, 2)}: not damaged."
            )
    return lines


def paired_sentence(rows: pd.DataFrame, variant: str, baseline: str) -> str:
    """One sentence per variant: the measures its seeds separate from the baseline, the rest."""
    higher, lower, unseparated, no_interval = [], [], [], []
    for _, row in rows.iterrows():
        name = f"`{row['metric']}`"
        if row["separated"] is None or (
            isinstance(row["separated"], float) and math.isnan(row["separated"])
        ):
            no_interval.append(name)
        elif row["separated"]:
            target = higher if row["mean"] > 0 else lower
            target.append(f"{name} ({fmt_stats(row, signed=True)})")
        else:
            unseparated.append(name)
    parts = []
    if higher:
        parts.append("higher " + ", ".join(higher))
    if lower:
        parts.append("lower " + ", ".join(lower))
    if unseparated:
        parts.append(f"{NOT_SEPARATED} on " + ", ".join(unseparated))
    if no_interval:
        parts.append(
            "no interval on " + ", ".join(no_interval) + f" (fewer than 2 seeds): {NOT_SEPARATED}"
        )
    return f"{variant} − {baseline}: " + "; ".join(parts) + "."
