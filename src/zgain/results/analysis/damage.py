"""The damage check of the likelihood objectives: a variant whose only term is `sum` starts at
the base (G^marg = 0), so a mean marginal_gain below DAMAGE_THRESHOLD means fine-tuning made it
a worse model of y given x (docs/method.md#the-decomposition)."""

from __future__ import annotations

import math
from collections.abc import Mapping

import pandas as pd

from zgain.cvae.terms import terms_used
from zgain.results.analysis.tables import SEEDS
from zgain.results.registry import INTERVAL

DAMAGE_THRESHOLD = -0.05
"""marginal_gain (nats/seq) below which a likelihood objective counts as damaged."""
LIKELIHOOD_TERM = "sum"
"""The reconstruction term of the likelihood objective (docs/method.md#sum)."""
DAMAGE_COLUMNS = ("variant", *INTERVAL, "damaged")


def variant_rows(table: pd.DataFrame, metric: str) -> pd.DataFrame:
    """The variants' cells over seeds for `metric`, defined ones only, best mean first."""
    rows = table[(table["metric"] == metric) & (table["kind"] == SEEDS)]
    rows = rows[rows["mean"].notna()]
    return rows.sort_values("mean", ascending=False, kind="stable")


def likelihood_variants(weights: Mapping[str, Mapping[str, float]]) -> list[str]:
    """Variants whose only positively weighted term is `sum`, the likelihood objective."""
    return [variant for variant, terms in weights.items() if terms_used(terms) == {LIKELIHOOD_TERM}]


def damage_table(
    decomposition: pd.DataFrame, weights: Mapping[str, Mapping[str, float]]
) -> pd.DataFrame:
    """One row per likelihood objective of `weights` (its params order): its marginal_gain over
    seeds (mean, low, high, n; NaN where undefined) and `damaged` (True below DAMAGE_THRESHOLD,
    False at or above it, None where marginal_gain is undefined)."""
    rows = variant_rows(decomposition, "marginal_gain").set_index("variant")
    out = []
    for variant in likelihood_variants(weights):
        if variant not in rows.index:
            out.append({"variant": variant, **dict.fromkeys(INTERVAL, math.nan), "damaged": None})
            continue
        row = rows.loc[variant]
        cells = {key: row[key] for key in INTERVAL if key in row.index}
        out.append({"variant": variant, **cells, "damaged": bool(row["mean"] < DAMAGE_THRESHOLD)})
    return pd.DataFrame(out, columns=list(DAMAGE_COLUMNS))
