"""Number formatting for the summary, and the damage check of likelihood objectives.

Every sentence is computed from the tables. Comparisons between variants are never made here:
they are the verdicts' (zgain.report.verdicts), by one rule (docs/method.md#verdicts).
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
