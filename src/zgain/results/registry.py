"""Every file of `reports/tables/`: its name and its columns, declared once.

Code that builds a table builds its rows in the declared order and makes the frame with
`Table.frame`; code that reads one names it by `Table.name`. A table whose columns depend on
the run (one per variant) declares no columns. The seed tables share CELLS and are named by
their specs (zgain.results.analysis.tables.SEED_TABLES, one decomposition per rate).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import pandas as pd

FOLDER = "tables"  # reports/tables/
INTERVAL = ("mean", "low", "high", "n")
"""A mean and its interval over n replicates (zgain.stats.intervals.Interval)."""
CELLS = ("variant", "metric", *INTERVAL, "kind", "source")
"""A long seed table: one row per cell of its Markdown (zgain.results.analysis.tables)."""


@dataclass(frozen=True)
class Table:
    name: str  # tables/<name>.csv
    columns: tuple[str, ...] = ()  # () when the rows decide

    @property
    def file(self) -> str:
        return f"{self.name}.csv"

    def frame(self, rows: Iterable) -> pd.DataFrame:
        """The table of `rows` (tuples in column order, or mappings by column)."""
        return pd.DataFrame(list(rows), columns=list(self.columns) or None)


POSITIONS = Table("information_by_position", ("variant", "position", *INTERVAL, "kind", "source"))
STRATEGIES = Table("information_by_strategy", CELLS)
FRONTIER = Table("frontier", ("variant", "rate", "metric", *INTERVAL))
TWINS = Table("equal_rate_twins", ("rate", "metric", *INTERVAL))
RATE_CHECK = Table(
    "rate_check",
    ("variant", "rate", "seed", "kl_target", "kl", "relative_error", "off")
    + ("beta_end", "kl_ema_end", "kl_ema_low", "kl_ema_high", "cause"),
)
ADJUSTMENT = Table("adjustment", ("variant", "rate", "metric", "slope", *INTERVAL, "excluded"))
VERDICTS = Table(
    "verdicts",
    ("rate", "metric", "a", "b", "comparison", "mean_diff", "low", "high", "tost_low")
    + ("tost_high", "se", "n", "p", "p_holm", "family", "delta", "verdict", "replicates_needed"),
)
HALF_WIDTHS = Table(
    "half_widths", ("variant", "rate", "mean", "sd", "n", "half_width", "target", "seeds_needed")
)
PROCEDURE = Table(
    "procedure",
    ("a", "b", "rate", "metric", *INTERVAL, "replicates", "sigma_b", "sigma_b_upper", "sigma_w")
    + ("sigma_w_upper", "detectable", "detectable_upper", "excluded", "tost_low", "tost_high")
    + ("p", "p_holm", "verdict"),
)
BASES = Table("bases")  # per base and rate, then one column per contested variant
MISMATCH = Table(
    "mismatch",
    ("base", "position", "n_tokens", "base_surprisal", "oracle_surprisal", "mismatch"),
)
PLATEAU = Table(
    "plateau",
    ("variant", "step_from", "step_to", "z_information_from", "z_information_to", "change")
    + ("capture_change", "capture_low", "capture_high", "n", "plateau", "members", "steps"),
)
PLATEAU_CONFIRMING = Table("plateau_confirming", PLATEAU.columns)  # over the confirming bases
RUNS = Table("runs")  # one row per run, one column per metric the report shows
