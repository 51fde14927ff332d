"""The plateau sentence of the Findings: how far the top group's mean moved over the plateau
rule's window, for the screening runs and, when they train their own length, the confirming
runs (docs/method.md#trained-to-a-plateau); the rule and its tables: analysis/plateau.py."""

from __future__ import annotations

import pandas as pd

from zgain.core.runs import rate_label
from zgain.params import Params
from zgain.report.render.markdown import bracket, fmt, plural
from zgain.results.analysis.plateau import (
    LEARNING_CONFIRMING_FIGURE,
    LEARNING_FIGURE,
    PLATEAU_TOLERANCE,
    TOP,
    window_name,
)
from zgain.results.registry import PLATEAU_CONFIRMING


def plateau_sentence(
    table: pd.DataFrame,
    headline: float,
    figure: str = f"figures/{LEARNING_FIGURE}",
    confirming: pd.DataFrame | None = None,
    tier: str = "",
) -> str:
    """One line: how much the top group's mean moved over the rule's window, against the
    tolerance (the window named: the last quarter, or the quarter before the rate's exact
    penalty); with the `confirming` tier's table (`tier` naming its runs), the same for those
    runs in a clause."""
    said = movement(table)
    if not said:
        return ""
    moved, window, verdict = said
    row = table[table["variant"] == TOP].iloc[0]
    at = f"C = {rate_label(headline)}"
    other = movement(confirming) if confirming is not None else None
    if other:
        steps = int(row["steps"])
        crow = confirming[confirming["variant"] == TOP].iloc[0]
        verdicts = (
            f"{verdict} on either"
            if other[2] == verdict
            else f"{verdict} (screening), {other[2]} (confirming)"
        )
        names = [read_window(row), read_window(crow)]
        named = names[0] if names[0] == names[1] else " (screening), ".join(names) + " (confirming)"
        return (
            f"Training ({named}): the top group's mean "
            f"validation I^θ at {at} moved {moved} over {window} of {steps} (screening) and "
            f"{other[0]} over {other[1]} of {int(crow['steps'])} ({tier}): "
            f"{verdicts} ([curves]({figure}), [confirming curves](figures/"
            f"{LEARNING_CONFIRMING_FIGURE}), [table](tables/{PLATEAU_CONFIRMING.file}))."
        )
    if "steps" in row and pd.notna(row["steps"]) and int(row["step_to"]) < int(row["steps"]):
        window += f" ({read_window(row)}, to step {int(row['steps'])})"
    return (
        f"Training: the top group's mean validation I^θ at {at} moved "
        f"{moved} over {window}: {verdict} ([curves]({figure}))."
    )


def read_window(row: pd.Series) -> str:
    """The name of the window a plateau row was read over: the last quarter when it ends at the
    last validated step, else the quarter before the penalty."""
    steps = int(row["steps"])
    return window_name((int(row["step_from"]) / steps, int(row["step_to"]) / steps))


def movement(table: pd.DataFrame) -> tuple[str, str, str] | None:
    """(how far the top group moved, over which steps, the verdict); None without a top group."""
    top = table[table["variant"] == TOP]
    if top.empty:
        return None
    row = top.iloc[0]
    moved = f"{fmt(row['change'], signed=True)} nats"
    if pd.notna(row["capture_change"]):
        spread = ""  # the interval over replicates, where there are several
        if "capture_low" in row and pd.notna(row["capture_low"]):
            spread = " " + bracket(row["capture_low"], row["capture_high"], signed=True)
        moved += f" (capture {fmt(row['capture_change'], signed=True)}{spread})"
        verdict = "a plateau" if row["plateau"] else f"no plateau (> ±{PLATEAU_TOLERANCE:g})"
    else:
        verdict = "no oracle to scale it"
    return moved, f"steps {int(row['step_from'])}–{int(row['step_to'])}", verdict


def confirming_tier(params: Params) -> str:
    """How the plateau sentence names the confirming runs."""
    confirm = params.cvae.confirm
    replicates = len(confirm.bases) * len(confirm.seeds)
    return f"confirming, {plural(replicates, 'replicate')}"
