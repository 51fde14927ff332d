"""The claims over bases of a combined study: each variant against the baseline, per metric,
by the report's one rule (docs/method.md#verdicts) with the bases as replicates."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from zgain.stats.intervals import mean_se, t_interval
from zgain.stats.power import detectable_difference, t_test_power
from zgain.stats.random_effects import component_intervals
from zgain.stats.rule import Evidence, decide

COLUMNS = (
    "a", "b", "metric", "mean", "low", "high", "bases", "seeds", "sigma_b", "sigma_b_low",
    "sigma_b_high", "sigma_w", "sigma_w_low", "sigma_w_high", "detectable", "delta",
    "power_at_delta", "tost_low", "tost_high", "p", "p_holm", "verdict",
)  # fmt: skip


def differences(runs: pd.DataFrame, a: str, b: str, metric: str) -> pd.DataFrame:
    """(base × seed) of a − b on `metric`, paired on (base, seed); runs one variant lacks are
    left out."""
    wide = runs.pivot_table(index=["base", "seed"], columns="variant", values=metric)
    return (wide[a] - wide[b]).dropna().unstack("seed")


def comparison(diffs: pd.DataFrame, confidence: float, delta: float) -> dict:
    """One comparison before Holm: per-base means' t-interval and TOST evidence, σ_B and σ_W
    with intervals (when every base has the same seeds, two or more), the detectable Δ at 80%
    power and the power at ±δ."""
    per_base = diffs.mean(axis=1).to_numpy()
    interval = t_interval(per_base, confidence)
    evidence = Evidence.of_values(per_base, confidence)
    seeds = int(diffs.notna().sum(axis=1).min()) if len(diffs) else 0
    balanced = bool(diffs.notna().all().all()) and diffs.shape[1] >= 2 and len(diffs) >= 2
    nan = math.nan
    sigmas = dict.fromkeys(
        ("sigma_b", "sigma_b_low", "sigma_b_high", "sigma_w", "sigma_w_low", "sigma_w_high"), nan
    )
    if balanced:
        c = component_intervals(diffs.to_numpy(), confidence)
        sigmas = {k: getattr(c, k) for k in sigmas}
    elif len(per_base) >= 2:
        sigmas["sigma_b"] = float(np.std(per_base, ddof=1))
    _, se, n = mean_se(per_base)
    sigma_w = 0.0 if math.isnan(sigmas["sigma_w"]) else sigmas["sigma_w"]
    detectable = detectable_difference(sigmas["sigma_b"], sigma_w, n, max(seeds, 1), confidence)
    power = t_test_power(delta / se, n, confidence) if n >= 2 and se > 0 else nan
    return {
        "mean": interval.mean, "low": interval.low, "high": interval.high, "bases": n,
        "seeds": seeds, **sigmas, "detectable": detectable, "delta": delta,
        "power_at_delta": power, "tost_low": evidence.tost_low, "tost_high": evidence.tost_high,
        "p": evidence.p, "evidence": evidence,
    }  # fmt: skip


def claims(
    runs: pd.DataFrame,
    baseline: str,
    variants: Sequence[str],
    deltas: Mapping[str, float],
    confidence: float,
) -> pd.DataFrame:
    """One row per (variant, metric of `deltas`): a − baseline over the bases, with Holm over
    the variants of each metric (one family per metric)."""
    rows = []
    for metric, delta in deltas.items():
        family = [
            {"a": v, "b": baseline, "metric": metric}
            | comparison(differences(runs, v, baseline, metric), confidence, delta)
            for v in variants
            if v != baseline
        ]
        decided = decide([row.pop("evidence") for row in family], delta, confidence)
        for row, (p_holm, verdict) in zip(family, decided, strict=True):
            rows.append(row | {"p_holm": p_holm, "verdict": verdict})
    return pd.DataFrame(rows, columns=list(COLUMNS))
