"""The t-interval helpers against hand computations (docs/method.md#uncertainty-over-seeds)."""

from __future__ import annotations

from zgain.report.render.markdown import method_label, percent


def test_method_label() -> None:
    assert method_label(3, 0.95) == "mean over 3 seeds, 95% t-interval"
    assert "no interval" in method_label(1, 0.95)
    assert percent(0.975) == "97.5%"
