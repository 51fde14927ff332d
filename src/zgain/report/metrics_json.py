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
DELTA_KEYS = {"capture": "dcap", "marginal_gain": "dgm"}
"""capture.json's keys of the claims over bases: `<key>_<variant>`, the variant's mean difference
from the baseline over the confirming bases at C."""


def json_number(value: float) -> float | None:
    """A float for JSON, None for NaN (JSON has no NaN)."""
    return float(value) if math.isfinite(value) else None


def metrics_summary(
    results: EvalResults,
    headline_rate: float,
    adjustment: pd.DataFrame,
    procedure: pd.DataFrame | None = None,
    baseline: str = "",
) -> dict:
    """reports/metrics.json: the headline rate C, the oracle's I*, each variant's seed means of
    SUMMARY_METRICS at C (`variants`, each run at the KL it reached) and its ADJUSTED metrics
    moved to exactly C (`adjusted_to_C`, the screening values); with the `procedure` table, each
    variant's mean difference from `baseline` over the confirming bases at C (`over_bases`, the
    claims the Findings open with); null for NaN."""
    variants = {
        variant: {m: json_number(finite_mean(results.values(variant, m))) for m in SUMMARY_METRICS}
        for variant in results.variants
    }
    adjusted: dict[str, dict[str, float | None]] = {}
    for row in adjustment[adjustment["rate"] == headline_rate].itertuples(index=False):
        adjusted.setdefault(row.variant, {})[row.metric] = json_number(float(row.mean))
    summary = {
        "headline_rate": headline_rate,
        "oracle_info": json_number(results.split_value("oracle_info")),
        "variants": variants,
        "adjusted_to_C": adjusted,
    }
    if procedure is not None and len(procedure):
        at = procedure[(procedure["b"] == baseline) & (procedure["rate"] == headline_rate)]
        over: dict[str, dict[str, float | None]] = {}
        for row in at.itertuples(index=False):
            over.setdefault(row.a, {})[row.metric] = json_number(float(row.mean))
        summary["over_bases"] = over
    return summary


def capture_view(metrics: dict) -> dict:
    """reports/capture.json, the file `dvc metrics show` reads: the headline rate C, the oracle's
    I* and each variant's capture adjusted to exactly C on the screening base, then each
    contested variant's Δ capture and Δ G^marg from the baseline over the confirming bases
    (DELTA_KEYS), rounded to CAPTURE_DIGITS (null where undefined)."""
    adjusted = metrics["adjusted_to_C"]
    view: dict[str, float | None] = {
        "headline_rate": metrics["headline_rate"],
        "oracle_info": rounded(metrics["oracle_info"]),
    }
    for name in metrics["variants"]:
        view[name] = rounded(adjusted.get(name, {}).get("capture"))
    for name, means in metrics.get("over_bases", {}).items():
        for metric, key in DELTA_KEYS.items():
            view[f"{key}_{name}"] = rounded(means.get(metric))
    return view


def rounded(value: float | None) -> float | None:
    return None if value is None else round(value, CAPTURE_DIGITS)
