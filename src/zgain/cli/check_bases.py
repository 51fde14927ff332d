"""`zgain check`'s part over bases: the null count outside and the reversed verdicts of
tables/procedure.csv (the comparisons over the confirming bases)."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd

PROCEDURE_KEY = ["a", "b", "rate", "metric"]
NULL_DRAWS = 4000
NULL_SEED = 1


def procedure_outside_counts(
    inside: list[float], draws: int = NULL_DRAWS, seed: int = NULL_SEED
) -> np.ndarray:
    """(draws,) the number of comparisons over bases outside under a rerun that redraws every
    base: comparison i outside with probability 1 − inside[i], independently."""
    rng = np.random.default_rng(seed)
    outside = 1.0 - np.asarray(inside, dtype=np.float64)
    return (rng.random((draws, outside.size)) < outside).sum(axis=1)


def reversed_in(fresh: str | None, committed: str | None, where: str = "") -> list[str]:
    """Comparisons of a verdict table (tables/verdicts.csv, or procedure.csv over bases) whose
    separated verdict reversed: better in one run, worse in the other. `where` follows the rate
    in each line (" over bases")."""
    if fresh is None or committed is None:
        return []
    tables = [pd.read_csv(io.StringIO(text)) for text in (committed, fresh)]
    if not all("verdict" in table.columns for table in tables):
        return []
    joined = tables[0].merge(tables[1], on=PROCEDURE_KEY, suffixes=("_committed", "_fresh"))
    pair = joined["verdict_committed"] + "/" + joined["verdict_fresh"]
    flipped = joined[pair.isin(["better/worse", "worse/better"])]
    return [
        f"{r.a} − {r.b} on {r.metric} at C = {r.rate:g}{where}: {r.verdict_committed} in the "
        f"committed run, {r.verdict_fresh} in the fresh one"
        for r in flipped.itertuples(index=False)
    ]


def reversed_over_bases(fresh: str | None, committed: str | None) -> list[str]:
    """`reversed_in` over tables/procedure.csv (the comparisons over the confirming bases)."""
    return reversed_in(fresh, committed, " over bases")
