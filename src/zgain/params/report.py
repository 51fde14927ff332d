"""The `report` block of `params.yaml`, and its checks against the listed variants."""

from __future__ import annotations

from collections.abc import Collection

from pydantic import StrictStr

from zgain.params.fields import Block, OpenUnit, PositiveFloat, fail


class EquivalenceParams(Block):
    """Margins δ of the verdict `equivalent within ±δ` (docs/method.md#verdicts), per metric."""

    capture: PositiveFloat  # capture share (I^θ / I*)
    z_information: PositiveFloat  # nats per sequence
    marginal_gain: PositiveFloat  # nats per sequence


class ReportParams(Block):
    """Aggregation over seeds and the tables of `reports/`."""

    confidence: OpenUnit  # level of the t-intervals over seeds (seeds are the replicates)
    baseline_variant: StrictStr  # every variant is compared with this one, paired by seed
    # comparisons a − b declared beside each variant against the baseline (never picked from
    # the results: docs/method.md#verdicts)
    pairs: list[tuple[StrictStr, StrictStr]] = []
    equivalence: EquivalenceParams  # δ per metric; also the capture half-width aimed at


def report_errors(report: ReportParams, variants: Collection[str]) -> list[ValueError]:
    """The baseline and every declared pair must name listed variants; a pair two of them."""
    known = ", ".join(variants)
    errors = []
    if report.baseline_variant not in variants:
        text = f"must name a variant in cvae.variants ({known})"
        errors.append(fail("report.baseline_variant", text, report.baseline_variant))
    for a, b in report.pairs:
        for name in (a, b):
            if name not in variants:
                text = f"must name variants in cvae.variants ({known})"
                errors.append(fail("report.pairs", text, [a, b]))
        if a == b:
            errors.append(fail("report.pairs", "must compare two different variants", [a, b]))
    return errors
