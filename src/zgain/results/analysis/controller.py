"""The rate check: which runs ended more than RATE_TOLERANCE off their target rate, and why,
from the rate controller's state where training ended (β and the batch-KL average KL_ema).
The causes, tried in order, are CAUSES' (docs/method.md#why-a-run-misses-its-rate).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import astuple, dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from zgain.core.runs import Run
from zgain.evaluate.schema import KL_TARGET_KEY
from zgain.params import Params
from zgain.results.curves import curve_path, read_curve
from zgain.results.load.runs import EvalResults
from zgain.results.registry import RATE_CHECK

SETTLE_FRACTION = 0.25
"""The closing share of the logged steps over which KL_ema's range is read."""
BOUND_TOLERANCE = 1e-3
"""Relative distance from beta_min or beta_max within which β counts as at the bound (the
logged β is float32)."""
CAUSES = {
    "beta_floor": "β ended at its floor beta_min = {beta_min:g}, so the controller could not "
    "raise the rate further",
    "beta_ceiling": "β ended at its ceiling beta_max = {beta_max:g}, so the controller could not "
    "lower the rate further",
    "unsettled": "the controller had not settled: the training batches' KL average still "
    "spanned more than {spread:.0%} of C over the last {closing:.0%} of training",
    "drifting": "the training batches' KL average was steady over the last {closing:.0%} of "
    "training but ended more than {tolerance:.0%} off C",
    "saved_weights": "the training batches' KL average ended within {tolerance:.0%} of C, but "
    "the saved weights' KL differs from that average of earlier iterates",
}
"""Each cause's sentence (a template of beta_min, beta_max, tolerance, spread = twice the
tolerance and closing = SETTLE_FRACTION), in the order the causes are tried."""


@dataclass(frozen=True)
class ControllerEnd:
    """β and KL_ema where a run's training ended, and KL_ema's range over its closing steps."""

    beta_end: float
    kl_ema_end: float
    kl_ema_low: float
    kl_ema_high: float

    @classmethod
    def of(cls, beta: pd.Series, kl_ema: pd.Series) -> ControllerEnd:
        """From a run's logged β and KL_ema curves (indexed by step)."""
        if beta.empty or kl_ema.empty:
            raise ValueError("a controller curve has no logged step")
        closing = kl_ema[kl_ema.index >= kl_ema.index.max() * (1 - SETTLE_FRACTION)]
        return cls(
            float(beta.iloc[-1]),
            float(kl_ema.iloc[-1]),
            float(closing.min()),
            float(closing.max()),
        )


def read_controller_end(live_dir: str | Path, run: Run) -> ControllerEnd:
    """One run's ControllerEnd from its dvclive curves (`beta.tsv`, `kl_ema.tsv`)."""
    beta = read_curve(curve_path(live_dir, run, "beta"), "beta")
    kl_ema = read_curve(curve_path(live_dir, run, "kl_ema"), "kl_ema")
    return ControllerEnd.of(beta, kl_ema)


def targeted_runs(by_rate: Mapping[float, EvalResults]) -> list[Run]:
    """The runs trained toward a target rate (a finite `kl_target` in their metrics)."""
    return [
        Run(row["variant"], rate, int(row["seed"]), results.base)
        for rate, results in by_rate.items()
        for _, row in results.runs.iterrows()
        if math.isfinite(float(row.get(KL_TARGET_KEY, math.nan)))
    ]


def controller_ends(
    live_dir: str | Path, by_rate: Mapping[float, EvalResults]
) -> dict[Run, ControllerEnd]:
    """ControllerEnd of every run of `by_rate` trained toward a target rate."""
    return {run: read_controller_end(live_dir, run) for run in targeted_runs(by_rate)}


def miss_cause(
    end: ControllerEnd, target: float, beta_min: float, beta_max: float, tolerance: float
) -> str:
    """The key of CAUSES that explains a run off its target (module docstring)."""
    if end.beta_end <= beta_min * (1 + BOUND_TOLERANCE):
        return "beta_floor"
    if end.beta_end >= beta_max * (1 - BOUND_TOLERANCE):
        return "beta_ceiling"
    if end.kl_ema_high - end.kl_ema_low > 2 * tolerance * target:
        return "unsettled"
    if abs(end.kl_ema_end / target - 1) > tolerance:
        return "drifting"
    return "saved_weights"


def beta_bounds(params: Params) -> tuple[float, float]:
    """(beta_min, beta_max) of the rate controller (`cvae.common.rate_target`)."""
    settings = params.cvae.common.rate_target
    return settings.beta_min, settings.beta_max


def cause_sentence(cause: str, beta_bounds: tuple[float, float], tolerance: float) -> str:
    """CAUSES[cause] with its figures filled in."""
    beta_min, beta_max = beta_bounds
    return CAUSES[cause].format(
        beta_min=beta_min,
        beta_max=beta_max,
        tolerance=tolerance,
        spread=2 * tolerance,
        closing=SETTLE_FRACTION,
    )


def by_cause(flagged: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """The flagged rows of a rate check grouped by cause, in the order of CAUSES (only the
    causes that occur)."""
    return {c: flagged[flagged["cause"] == c] for c in CAUSES if (flagged["cause"] == c).any()}


RATE_TOLERANCE = 0.10
# "more than 10% off": kl/C − 1 computed in floats lands a few ulp past 0.10 for a run exactly
# 10% off (1.1/1.0 − 1 = 0.10000000000000009); this slack keeps such a run in.
TOLERANCE_SLACK = 1e-9
"""A run whose achieved test KL is more than this share away from its target is flagged."""


def outside_tolerance(kls: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """(n,) True where a run's achieved KL is more than RATE_TOLERANCE from its target (a run
    without a target, under a fixed β schedule, is never off)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        error = np.abs(np.asarray(kls, dtype=np.float64) / np.asarray(targets, np.float64) - 1.0)
    return np.isfinite(error) & (error > RATE_TOLERANCE + TOLERANCE_SLACK)


def rate_check(
    by_rate: Mapping[float, EvalResults],
    controller: Mapping[Run, ControllerEnd],
    beta_bounds: tuple[float, float],
) -> pd.DataFrame:
    """One row per run: its target KL, achieved test KL, kl/target − 1, whether it is off, the
    rate controller's state where training ended, and for a run that is off the cause
    (beta_bounds = (beta_min, beta_max)).

    A run trained under a fixed β schedule has no target (NaN), no controller state and is
    never flagged; `controller` holds every run with a target.
    """
    rows = []
    for rate, results in by_rate.items():
        for _, run in results.runs.iterrows():
            target = float(run.get(KL_TARGET_KEY, math.nan))
            error = run["kl"] / target - 1.0 if math.isfinite(target) else math.nan
            off = bool(outside_tolerance(run["kl"], target))
            seed, state, cause = int(run["seed"]), (math.nan,) * 4, math.nan
            if math.isfinite(target):
                end = controller[Run(run["variant"], rate, seed, results.base)]
                state = astuple(end)
                if off:
                    cause = miss_cause(end, target, *beta_bounds, RATE_TOLERANCE)
            kl = float(run["kl"])
            rows.append((run["variant"], rate, seed, target, kl, error, off, *state, cause))
    return RATE_CHECK.frame(rows)


def off_target(check: pd.DataFrame) -> pd.DataFrame:
    """The flagged runs of `rate_check`, worst first."""
    flagged = check[check["off"]]
    order = np.argsort(-np.abs(flagged["relative_error"].to_numpy()), kind="stable")
    return flagged.iloc[order]


@dataclass(frozen=True)
class RateMisses:
    """The rate check read: how many runs target a rate, those more than RATE_TOLERANCE off
    (worst first), and those grouped by cause (CAUSES order, only the causes that occur)."""

    targeted: int
    flagged: pd.DataFrame
    causes: dict[str, pd.DataFrame]


def rate_misses(check: pd.DataFrame) -> RateMisses:
    """`RateMisses` of a `rate_check` table (runs without a target are not counted)."""
    targeted = check[check["kl_target"].notna()]
    flagged = off_target(targeted)
    return RateMisses(len(targeted), flagged, by_cause(flagged))
