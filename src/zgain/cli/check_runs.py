"""`zgain check`'s run-by-run part: each run of the fresh report beside the committed one.

The screening tier has one seed per (variant, rate), so its tables carry no interval over seeds
and nothing says how far a run retrained on another CPU may move. What can be said is whether
each run is the committed run itself: the same machine type retrains every run bit for bit, and
another CPU's float rounding moves each one. These comparisons are reported, never part of the
exit status (docs/usage.md#what-is-and-is-not-reproducible).
"""

from __future__ import annotations

import io
from dataclasses import dataclass

import numpy as np
import pandas as pd

RUN_KEY = ["variant", "rate", "seed"]
"""A run of tables/runs.csv (the screening tier on the first base)."""
HEADLINE = "capture"
"""The metric whose largest difference the summary line names."""
SAME = 1e-12
"""Two values are the same run's when they differ by no more than this (CSV round-trips exact
floats, so an unchanged rerun on the same machine type differs by 0)."""


@dataclass(frozen=True)
class RunComparison:
    """Every run in both reports, metric by metric."""

    runs: int
    identical: int
    metrics: int
    largest: float  # the largest |fresh − committed| of HEADLINE over the runs
    where: str  # the run with that difference, "variant C = rate seed s"

    def line(self) -> str:
        moved = (
            f"; the largest |Δ {HEADLINE}| is {self.largest:.4f} ({self.where})"
            if self.identical < self.runs
            else ""
        )
        return (
            f"run by run (one seed, no interval): {self.identical} of {self.runs} runs equal the "
            f"committed run in all {self.metrics} metrics{moved}"
        )


def compare_runs(fresh: str | None, committed: str | None) -> RunComparison | None:
    """The runs of tables/runs.csv present in both texts, compared on every numeric metric both
    hold (None when either has no such table or they share no run)."""
    if fresh is None or committed is None:
        return None
    tables = [pd.read_csv(io.StringIO(text)) for text in (committed, fresh)]
    joined = tables[0].merge(tables[1], on=RUN_KEY, suffixes=("_c", "_f"))
    shared = [
        column
        for column in tables[0].columns
        if column not in RUN_KEY
        and column in tables[1].columns
        and pd.api.types.is_numeric_dtype(tables[0][column])
    ]
    if joined.empty or not shared:
        return None
    gaps = np.column_stack(
        [(joined[f"{m}_f"] - joined[f"{m}_c"]).abs().fillna(0.0).to_numpy(float) for m in shared]
    )
    # NaN on both sides is the same value; NaN on one side only is a difference
    one_sided = np.column_stack(
        [(joined[f"{m}_f"].isna() != joined[f"{m}_c"].isna()).to_numpy() for m in shared]
    )
    identical = int(((gaps <= SAME) & ~one_sided).all(axis=1).sum())
    if HEADLINE in shared:
        headline = gaps[:, shared.index(HEADLINE)]
        row = joined.iloc[int(np.argmax(headline))]
        largest, where = float(headline.max()), f"{row.variant} C = {row.rate:g} seed {row.seed}"
    else:
        largest, where = float("nan"), "no capture column"
    return RunComparison(len(joined), identical, len(shared), largest, where)
