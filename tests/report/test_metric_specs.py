"""zgain.results.metrics: one MetricSpec per metric, read by the glossary, the bounds, the labels
and the figures' axes, and covering every key the evaluate stage writes."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from zgain.evaluate.schema import DECOMPOSITION_KEYS, RECOVERY_KEYS, USAGE_KEYS
from zgain.figures.style import AXIS_LABELS
from zgain.report.render.glossary import GLOSSARY, glossary_lines
from zgain.report.render.markdown import LABELS
from zgain.results.analysis.bounds import METRIC_BOUNDS, metric_bounds
from zgain.results.metrics import FRONTIER_PANELS, METRICS, SPECS, label, spec

REPO = Path(__file__).resolve().parents[2]


def test_every_evaluated_key_has_exactly_one_spec() -> None:
    keys = [s.key for s in SPECS]
    assert len(keys) == len(set(keys))
    missing = set(DECOMPOSITION_KEYS + RECOVERY_KEYS + USAGE_KEYS) - set(METRICS)
    assert not missing


def test_every_spec_section_is_a_heading_of_the_method_page() -> None:
    from tests.test_docs import anchors

    found = anchors(REPO / "docs" / "method.md")
    assert {s.section for s in SPECS} <= found
    assert METRICS["capture"].formula == "docs/method.md#the-decomposition"


def test_the_readers_take_their_facts_from_the_specs() -> None:
    assert LABELS == {"gross_gain": "G", "marginal_gain": "G^marg", "z_information": "I^θ",
                      "capture": "capture"}  # fmt: skip
    assert list(AXIS_LABELS) == list(FRONTIER_PANELS)
    assert AXIS_LABELS["capture"] == "capture I^θ / I*"
    assert METRIC_BOUNDS["kl"] == (0.0, math.inf)
    assert METRIC_BOUNDS["probe_accuracy"] == (0.0, 1.0)
    assert "capture" not in METRIC_BOUNDS  # I^θ can be negative, and so can capture
    assert metric_bounds("active_units", 4) == (0.0, 4.0)
    assert GLOSSARY["kl"] == (METRICS["kl"].definition, "nats/seq")
    assert glossary_lines(["kl"]) == [
        "- `kl`: mean_i KL(q(z|x_i,y_i) ‖ p(z|x_i)), the rate paid for z "
        "(nats/seq; docs/method.md#the-decomposition)"
    ]


def test_an_unknown_metric_is_named() -> None:
    with pytest.raises(KeyError, match="'no_such_metric' has no MetricSpec"):
        spec("no_such_metric")
    assert label("no_such_metric") == "no_such_metric"
    assert label("marginal_gain") == "G^marg"
