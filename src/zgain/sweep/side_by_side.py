"""Claims over bases side by side: the same comparisons on several worlds
(docs/usage.md#several-worlds), and the same study at several step counts
(docs/defaults.md#the-stability-view). Each column is one finished study's
tables/procedure.csv; a comparison's `agreement` says whether its verdict holds across them.
Pure: frames in, frames and Markdown out; `zgain.cli.worlds` and `zgain.cli.stability` read
and write the folders.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from zgain.report.render.markdown import fmt, fmt_stats, frame_table, markdown_table, percent, pivot
from zgain.stats.rule import BETTER, UNDETERMINED, WORSE

KNOBS = ("prefix", "decoy_positions", "decoy_noise")
"""The world's keys of `data` the view names (docs/method.md#world-knobs)."""
ORACLE = "oracle"  # the oracle's rows of tables/information_by_position.csv
KEY = ["a", "b", "rate", "metric"]
HOLDS, FLIPS, DIFFERS, OPEN = "holds", "flips", "differs", "open"
ACROSS_WORLDS = {
    HOLDS: "Hold on every world",
    FLIPS: "Flip (better on one world, worse on another)",
    DIFFERS: "Differ (decided on some worlds only, or equivalent on one and separated on another)",
    OPEN: "Undetermined on every world",
}
"""Each agreement's bullet in the worlds view."""
ZERO_TOLERANCE = 1e-12  # nats
WORLD_HEADERS = {
    "base_max_steps": "base max_steps",
    "test_excess": "base excess",
    "oracle_info": "mean I*",
    "first_token_share": "share at t = 0",
    "oracle_by_position": "i*_t by position",
}
"""The worlds table's columns as summary.md heads them (the others keep their names)."""


@dataclass(frozen=True)
class World:
    """One world's finished run: its name, params and the tables the view reads."""

    name: str
    params: Mapping  # the run's params.yaml, parsed
    procedure: pd.DataFrame  # tables/procedure.csv
    positions: pd.DataFrame  # tables/information_by_position.csv
    oracle_info: float  # mean I* over the test split (nats), from tables/runs.csv
    # mean over bases of the base's test excess over the oracle (nats/seq), from
    # tables/bases.csv: how far the world's bases are from b*_t (docs/method.md#mismatch)
    test_excess: float = math.nan

    def row(self) -> dict:
        """The world's row of `worlds_table`; a value within float rounding of 0 (i*_t of a
        shared-prefix slot is exactly 0 in real arithmetic, about −1e-17 in floats) is 0, so it
        does not print as −0.000."""
        data, base = self.params["data"], self.params["base"]
        at = self.positions[self.positions["variant"] == ORACLE].sort_values("position")
        by_position = [0.0 if abs(v) < ZERO_TOLERANCE else float(v) for v in at["mean"]]
        share = by_position[0] / self.oracle_info if by_position and self.oracle_info else math.nan
        return {
            "world": self.name,
            "knobs": ", ".join(f"{k} {data[k]}" for k in KNOBS if k in data),
            "bases": len(base["seeds"]),
            "base_max_steps": "n/a" if base.get("max_steps") is None else str(base["max_steps"]),
            "test_excess": self.test_excess,
            "oracle_info": self.oracle_info,
            "first_token_share": 0.0 if abs(share) < ZERO_TOLERANCE else share,
            "oracle_by_position": " ".join(fmt(v) for v in by_position),
        }


def worlds_table(worlds: Sequence[World]) -> pd.DataFrame:
    """One row per world: knobs, bases, the bases' step cap (`base.max_steps`; training may
    stop earlier), mean I*, the share of it on the first token (mean i*_0 / mean I*) and the
    oracle's i*_t by position."""
    return pd.DataFrame([w.row() for w in worlds])


def agreement(verdicts: Sequence[str]) -> str:
    """How one comparison's verdicts across worlds agree: `flips` when it is better on one world
    and worse on another; `holds` when every world gives the same separated or equivalent
    verdict; `open` when no world decides; `differs` otherwise (some worlds undetermined, or
    equivalent on one and separated on another)."""
    decided = {v for v in verdicts if v != UNDETERMINED}
    if {BETTER, WORSE} <= decided:
        return FLIPS
    if not decided:
        return OPEN
    if len(decided) == 1 and UNDETERMINED not in verdicts:
        return HOLDS
    return DIFFERS


def verdicts_across(worlds: Sequence[World]) -> pd.DataFrame:
    """Long table: one row per comparison (a, b, rate, metric) present on every world, with
    each world's mean, interval, bases and verdict, and `agreement` across the worlds."""
    return side_by_side({w.name: w.procedure for w in worlds}, "world")


def side_by_side(procedures: Mapping[str, pd.DataFrame], column: str) -> pd.DataFrame:
    """The rows of several tables/procedure.csv, named in `column`, for the comparisons (a, b,
    rate, metric) present in every one, in the given order, with each comparison's
    `agreement` across them."""
    frames = []
    for name, procedure in procedures.items():
        cols = [*KEY, "mean", "low", "high", "n", "verdict"]
        frames.append(procedure[cols].assign(**{column: name}))
    long = pd.concat(frames, ignore_index=True)
    counts = long.groupby(KEY)[column].nunique()
    shared = counts[counts == len(procedures)].index
    long = long.set_index(KEY).loc[shared].reset_index()
    order = {name: i for i, name in enumerate(procedures)}
    long = long.sort_values([*KEY, column], key=lambda c: c.map(order) if c.name == column else c)
    verdicts = long.groupby(KEY)["verdict"].agg(list)
    agreed = verdicts.map(agreement).rename("agreement")
    return long.merge(agreed.reset_index(), on=KEY)


def cell(row: Mapping) -> str:
    return f"{row['verdict']} {fmt_stats(row)}"


def view_markdown(worlds: Sequence[World], across: pd.DataFrame, command: str) -> str:
    """summary.md of the view: the worlds, then per metric one table of verdicts per world."""
    names = [w.name for w in worlds]
    table = worlds_table(worlds)
    lines = [
        "# The same comparisons on several worlds",
        "",
        f"Generated by `{command}`; do not edit by hand. Each world is one run of the pipeline "
        "(its `params.yaml` beside its report); a verdict is the report's one rule over that "
        "world's bases (tables/procedure.csv: per-base means as replicates, Holm over each "
        "rate and metric).",
        "",
        "## The worlds",
        "",
        "i*_t: the oracle's mean strategy information at target position t = 0, 1, … (nats); "
        "share at t = 0: mean i*_0 / mean I*; base excess: the bases' mean test excess over "
        "the oracle (nats per sequence), their mismatch.",
        "",
        frame_table(table.rename(columns=WORLD_HEADERS)),
        "",
    ]
    lines += summary_sentences(across)
    lines += comparison_tables(across, "world", names, interval_level(worlds), "across worlds")
    return "\n".join(lines)


def comparison_tables(
    table: pd.DataFrame, column: str, names: Sequence[str], level: str, across: str
) -> list[str]:
    """One section per (rate, metric) of a `side_by_side` table: a row per comparison, its cell
    under each of `names` (the values of `column`), then its agreement."""
    lines = []
    for (rate, metric), group in table.groupby(["rate", "metric"], sort=True):
        lines += [f"## {metric} at C = {rate:g}", "", f"Each cell: verdict, a − b [{level}].", ""]
        rows = pivot(group, ["a", "b"], column, cell, names, label=lambda k: f"{k[0]} − {k[1]}")
        agreed = group.groupby(["a", "b"], sort=False)["agreement"].first()
        rows = [[*row, agreement] for row, agreement in zip(rows, agreed, strict=True)]
        lines += [markdown_table(["comparison", *names, across], rows), ""]
    return lines


def interval_level(worlds: Sequence[World]) -> str:
    """The cells' interval, named by its level: each world's tables/procedure.csv is at that
    world's report.confidence ("95% interval" when they share one)."""
    levels = {w.params.get("report", {}).get("confidence") for w in worlds}
    if len(levels) == 1 and None not in levels:
        return f"{percent(float(levels.pop()))} interval"
    return "interval at each world's report.confidence"


def summary_sentences(across: pd.DataFrame) -> list[str]:
    """What holds on every world, what flips and where, one bullet per kind."""
    better = across[across["verdict"] == BETTER]
    above = "; ".join(
        f"{r['a']} − {r['b']} ({r['metric']}, C = {r['rate']:g}) on {r['world']}"
        for _, r in better.iterrows()
    )
    lines = ["## Across worlds", "", f"- Better than b on some world: {above or 'none'}."]
    for kind, items in by_agreement(across, "world", "on").items():
        label = ACROSS_WORLDS[kind]
        lines.append(
            f"- {label} ({len(items)}): " + "; ".join(items) + "." if items else f"- {label}: none."
        )
    return [*lines, ""]


def by_agreement(table: pd.DataFrame, column: str, word: str) -> dict[str, list[str]]:
    """The `verdict_items` of the comparisons of each agreement (HOLDS, FLIPS, DIFFERS, OPEN)."""
    per = table.drop_duplicates(KEY)
    kinds = (HOLDS, FLIPS, DIFFERS, OPEN)
    return {k: verdict_items(table, per[per["agreement"] == k], column, word) for k in kinds}


def verdict_items(table: pd.DataFrame, chosen: pd.DataFrame, column: str, word: str) -> list[str]:
    """`a − b (metric, C = c: v1 <word> n1, v2 <word> n2)` for each chosen comparison: its
    verdict under each value of `column` in `table`."""
    items = []
    for _, r in chosen.iterrows():
        rows = table.set_index(KEY).loc[tuple(r[k] for k in KEY)]
        pairs = zip(rows[column], rows["verdict"], strict=True)
        where = ", ".join(f"{v} {word} {n}" for n, v in pairs)
        items.append(f"{r['a']} − {r['b']} ({r['metric']}, C = {r['rate']:g}: {where})")
    return items


# The same study at several step counts

RUN = "run"
ACROSS_STEPS = {
    HOLDS: "hold at every step count",
    FLIPS: "flip (better at one step count, worse at another)",
    DIFFERS: "change with the steps (decided at some step counts only, or equivalent at one and "
    "separated at another)",
    OPEN: "undetermined at every step count",
}


@dataclass(frozen=True)
class Trained:
    """One finished study: its name, its training steps, report level and procedure table."""

    name: str
    steps: int
    confidence: float
    procedure: pd.DataFrame  # tables/procedure.csv

    @property
    def label(self) -> str:
        return f"{self.steps} steps"


def stability_table(runs: Sequence[Trained]) -> pd.DataFrame:
    """Long table: each comparison present in every run, per run (named by its steps), with
    its mean, interval, bases and verdict, and `agreement` across the runs."""
    return side_by_side({r.label: r.procedure for r in runs}, RUN)


def stability_markdown(runs: Sequence[Trained], table: pd.DataFrame, command: str) -> str:
    """summary.md of the view: what holds at every step count, then one table per rate and
    metric with each run's verdict cell."""
    labels = [r.label for r in runs]
    levels = {r.confidence for r in runs}
    level = f"{percent(levels.pop())} interval" if len(levels) == 1 else "interval"
    lines = [
        "# Stability: the claims over bases at more training steps",
        "",
        f"Generated by `{command}`; do not edit by hand. Each column is one run of the whole "
        f"study ({', '.join(f'`{r.name}`: {r.label}' for r in runs)}); a "
        "verdict is the report's one rule over the confirming bases (tables/procedure.csv).",
        "",
    ]
    for kind, items in by_agreement(table, RUN, "at").items():
        said = ACROSS_STEPS[kind]
        lines.append(f"- {len(items)} {said}" + (": " + "; ".join(items) if items else "") + ".")
    lines.append("")
    lines += comparison_tables(table, RUN, labels, level, "across steps")
    return "\n".join(lines)
