"""reports/metrics.json and reports/capture.json: the headline means per variant, and the
compact view of them that `dvc metrics show` and `dvc exp show` read."""

from __future__ import annotations

import math

from zgain.report.loading import EvalResults
from zgain.report.statistics import finite_mean

SUMMARY_METRICS = ("marginal_gain", "z_information", "capture", "kl", "normalized_recovery")


def json_number(value: float) -> float | None:
    """A float for JSON, None for NaN (JSON has no NaN)."""
    return float(value) if math.isfinite(value) else None


def metrics_summary(results: EvalResults, headline_rate: float) -> dict:
    """reports/metrics.json: {"headline_rate": C, "oracle_info": I*, "variants": {name:
    {metric: seed mean}}}.

    The runs at the headline rate C: seed means of SUMMARY_METRICS over the seeds where each is
    defined; null when none is. I* (the oracle's mean z-information) anchors every figure.
    """
    variants = {
        variant: {m: json_number(finite_mean(results.values(variant, m))) for m in SUMMARY_METRICS}
        for variant in results.variants
    }
    return {
        "headline_rate": headline_rate,
        "oracle_info": json_number(results.split_value("oracle_info")),
        "variants": variants,
    }


def capture_view(metrics: dict) -> dict:
    """reports/capture.json, the one file `dvc metrics show` / `dvc exp show` read: each
    variant's seed-mean capture at the headline rate, keyed by the variant's name, so that the
    views of 11 variants fit 200 columns. The headline rate, I* and the other headline means
    are in reports/metrics.json."""
    return {name: values["capture"] for name, values in metrics["variants"].items()}
