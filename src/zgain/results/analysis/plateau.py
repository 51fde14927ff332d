"""Whether training reached a plateau: the headline rate's validation I^θ over the steps
(docs/method.md#trained-to-a-plateau). The rule reads a window one quarter of training long
over which one mechanism holds the rate throughout: the last quarter, unless the rate target's
exact penalty starts less than a quarter before it (then the quarter before the penalty).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd

from zgain.core.errors import DataError
from zgain.params import CommonCVAEParams
from zgain.results.registry import PLATEAU
from zgain.stats.intervals import t_interval

QUANTITY = "val_z_information"
LEARNING_FIGURE = "learning_curves.png"
LEARNING_CONFIRMING_FIGURE = "learning_curves_confirming.png"  # the confirming runs' curves
LAST_QUARTER = 0.75  # the plateau compares this fraction of training with its end
QUARTER = 1.0 - LAST_QUARTER
# the last quarter is read under the penalty when the penalty has held the rate for a quarter
# before it: its switch-on (the rate pulled back to C) then lies outside the window
SETTLED_BY = LAST_QUARTER - QUARTER
PLATEAU_TOLERANCE = 0.01  # capture: the last quarter moves the top group's mean by at most this
TOP = "top group"


def plateau_window(common: CommonCVAEParams) -> tuple[float, float]:
    """The window the rule reads, as shares of `common.steps`: the last quarter when no exact
    penalty acts or it starts by SETTLED_BY (it holds the rate over the whole window and the
    quarter before); else the quarter that ends where the penalty starts (the multiplier alone
    holds the rate there). Either way the penalty's switch-on can neither make nor break a
    plateau."""
    target = common.rate_target
    late = SETTLED_BY < target.penalty_from < 1
    if common.beta_schedule == "rate_target" and target.penalty > 0 and late:
        end = target.penalty_from
        return max(0.0, end - QUARTER), end
    return LAST_QUARTER, 1.0


def window_name(window: tuple[float, float]) -> str:
    """How the Findings and captions name the rule's window."""
    return "the last quarter" if window[1] >= 1.0 else "the quarter before the rate's exact penalty"


def last_validated(steps_seen: Sequence[int], limit: float, what: str, val_every: int) -> int:
    """The last validated step at or before `limit`; DataError naming `what` when none."""
    earlier = [s for s in steps_seen if s <= limit]
    if not earlier:
        raise DataError(
            f"learning curve of {QUANTITY}: no validation at or before step {limit:g} ({what}; "
            f"cvae.common.val_every = {val_every})"
        )
    return int(max(earlier))


def validated(curve: pd.DataFrame, val_every: int, steps: int) -> pd.DataFrame:
    """(step, variant, seed, val_z_information) at the validated steps: multiples of val_every
    and the last step."""
    missing = {"step", "series", QUANTITY} - set(curve.columns)
    if missing:
        raise DataError(f"learning curve of {QUANTITY}: missing columns {sorted(missing)}")
    at = curve[(curve["step"] % val_every == 0) | (curve["step"] == steps)].copy()
    if at.empty:
        raise DataError(
            f"learning curve of {QUANTITY}: no validated step (multiples of val_every = "
            f"{val_every}, or the last step {steps})"
        )
    parts = at["series"].str.rsplit("/seed", n=1, expand=True)
    at["variant"], at["seed"] = parts[0], parts[1].astype(int)
    return at[["step", "variant", "seed", QUANTITY]].reset_index(drop=True)


def mean_curves(points: pd.DataFrame) -> pd.DataFrame:
    """Per variant and validated step, the mean over seeds (columns: variants, index: step)."""
    return points.pivot_table(index="step", columns="variant", values=QUANTITY, aggfunc="mean")


def seed_changes(points: pd.DataFrame, start: int, end: int) -> pd.DataFrame:
    """Each seed's change of validation I^θ from step `start` to `end` (nats; rows: seeds,
    columns: variants), NaN where a seed lacks either step."""
    wide = points.pivot_table(index=["seed", "step"], columns="variant", values=QUANTITY)
    return wide.xs(end, level="step") - wide.xs(start, level="step")


def plateau_table(
    curve: pd.DataFrame,
    val_every: int,
    steps: int,
    variants: Sequence[str],
    top: Sequence[str],
    oracle_info: float,
    window: tuple[float, float] = (LAST_QUARTER, 1.0),
    *,
    confidence: float,
) -> pd.DataFrame:
    """Per variant (params order), then the top group's mean: validation I^θ (mean over seeds)
    at step_from and step_to (the last validated steps ≤ window[0]·steps and ≤ window[1]·steps,
    `plateau_window`), the change in nats and as capture (÷ the oracle's mean I* on the test
    split; NaN without an oracle), the capture change's t-interval at `confidence` over the
    seeds (replicates) that each moved (NaN bounds with one), and whether the mean change is
    within PLATEAU_TOLERANCE."""
    points = validated(curve, val_every, steps)
    means = mean_curves(points)
    if steps not in means.index:
        raise DataError(f"learning curve of {QUANTITY}: no value at the last step {steps}")
    start = last_validated(means.index, window[0] * steps, "the window's start", val_every)
    end = last_validated(means.index, window[1] * steps, "the window's end", val_every)
    columns = [v for v in variants if v in means.columns]
    rows = [(v, means.loc[start, v], means.loc[end, v]) for v in columns]
    members = [v for v in top if v in means.columns]
    if members:
        rows.append((TOP, means.loc[start, members].mean(), means.loc[end, members].mean()))
    table = pd.DataFrame(rows, columns=["variant", "z_information_from", "z_information_to"])
    table.insert(1, "step_from", start)
    table.insert(2, "step_to", end)
    table["change"] = table["z_information_to"] - table["z_information_from"]
    scale = oracle_info if math.isfinite(oracle_info) and oracle_info > 0 else math.nan
    table["capture_change"] = table["change"] / scale
    moves = seed_changes(points, start, end) / scale  # (seeds, variants)
    moves[TOP] = moves[members].mean(axis=1) if members else math.nan
    spread = [t_interval(moves[v].to_numpy(), confidence) for v in table["variant"]]
    table["capture_low"] = [i.low for i in spread]
    table["capture_high"] = [i.high for i in spread]
    table["n"] = [i.n for i in spread]
    table["plateau"] = table["capture_change"].abs() <= PLATEAU_TOLERANCE
    table["members"] = [", ".join(members) if v == TOP else "" for v in table["variant"]]
    return table


def tier_plateau(
    curve: pd.DataFrame, common: CommonCVAEParams, variants: Sequence[str], oracle_info: float,
    top: Sequence[str], confidence: float,
) -> pd.DataFrame:  # fmt: skip
    """The plateau table of one tier's runs (the screening runs at the headline rate, or the
    confirming runs' mean over replicates) at the tier's own length `common.steps` and window,
    intervals at `confidence`."""
    window = plateau_window(common)
    table = plateau_table(
        curve, common.val_every, common.steps, variants, top, oracle_info, window,
        confidence=confidence,
    )  # fmt: skip
    return table.assign(steps=common.steps)[list(PLATEAU.columns)]
