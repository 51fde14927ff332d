"""reports/metrics.json and reports/capture.json: the headline means per variant, and the
compact view of them that `dvc metrics show` and `dvc exp show` read."""

from __future__ import annotations

import math

import pandas as pd

from zgain.report.loading import EvalResults
from zgain.report.statistics import finite_mean

FILE, CAPTURE_FILE = "metrics.json", "capture.json"  # capture.json: the DVC metric
SUMMARY_METRICS = ("marginal_gain", "z_information", "capture", "kl", "normalized_recovery")
CAPTURE_DIGITS = 4


def json_number(value: float) -> float | None:
    """A float for JSON, None for NaN (JSON has no NaN)."""
    return float(value) if math.isfinite(value) else None


def metrics_summary(results: EvalResults, headline_rate: float, adjustment: pd.DataFrame) -> dict:
    """reports/metrics.json: the headline rate C, the oracle's I*, each variant's seed means of
    SUMMARY_METRICS at C (`variants`, each run at the KL it reached) and its ADJUSTED metrics
    moved to exactly C (`adjusted_to_C`, the values the Findings read); null for NaN."""
    variants = {
        variant: {m: json_number(finite_mean(results.values(variant, m))) for m in SUMMARY_METRICS}
        for variant in results.variants
    }
    adjusted: dict[str, dict[str, float | None]] = {}
    for row in adjustment[adjustment["rate"] == headline_rate].itertuples(index=False):
        adjusted.setdefault(row.variant, {})[row.metric] = json_number(float(row.mean))
    return {
        "headline_rate": headline_rate,
        "oracle_info": json_number(results.split_value("oracle_info")),
        "variants": variants,
        "adjusted_to_C": adjusted,
    }


def capture_view(metrics: dict) -> dict:
    """reports/capture.json, the file `dvc metrics show` reads: the headline rate C, the oracle's
    I* and each variant's capture adjusted to exactly C, rounded to CAPTURE_DIGITS so that 11
    variants fit 200 columns (null where undefined)."""
    adjusted = metrics["adjusted_to_C"]
    view: dict[str, float | None] = {
        "headline_rate": metrics["headline_rate"],
        "oracle_info": rounded(metrics["oracle_info"]),
    }
    for name in metrics["variants"]:
        view[name] = rounded(adjusted.get(name, {}).get("capture"))
    return view


def rounded(value: float | None) -> float | None:
    return None if value is None else round(value, CAPTURE_DIGITS)
