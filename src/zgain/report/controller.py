"""Why a run missed its target rate: the rate controller's state where training ended.

docs/method.md#why-a-run-misses-its-rate. Each run trained under `rate_target` logs β and the
batch-KL average KL_ema at every logging step (zgain.cvae.rate). A run whose test KL is more
than the tolerance off its target C gets one cause, the first that holds:

1. `beta_floor` / `beta_ceiling`: the last β sits at beta_min / beta_max, so the controller
   could not move the rate further;
2. `unsettled`: KL_ema still spanned more than twice the tolerance of C over the last
   SETTLE_FRACTION of the logged steps;
3. `drifting`: KL_ema was steady but ended more than the tolerance away from C;
4. `saved_weights`: KL_ema ended within the tolerance of C, so the controller met its target
   on the recent training batches; the saved weights' KL differs from that running average,
   which lags the last iterates (bench/saved-kl-results.md reads such runs' saved weights on
   training and test examples alike).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

import pandas as pd

from zgain.core.runs import Run
from zgain.evaluate.schema import KL_TARGET_KEY
from zgain.params import Params
from zgain.report.curves import curve_path, read_curve
from zgain.report.loading import EvalResults

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

    def row(self) -> dict[str, float]:
        return asdict(self)


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
