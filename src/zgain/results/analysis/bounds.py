"""The ranges metrics cannot leave, and intervals kept inside them
(docs/method.md#bounded-intervals): the true mean lies in the range, so intersecting a
t-interval with it keeps its coverage; a ratio whose denominator's interval holds 0 is n/a.
"""

from __future__ import annotations

import math

from zgain.results.metrics import LATENT_DIM_BOUND, METRICS, UNBOUNDED
from zgain.stats.intervals import Interval, clip

METRIC_BOUNDS: dict[str, tuple[float, float | str]] = {
    key: spec.bounds for key, spec in METRICS.items() if spec.bounds != UNBOUNDED
}
"""metric -> (lower, upper) from its MetricSpec: the range of the quantity itself (the latent size
for active_units). Metrics not listed are unbounded (gains, I^θ and capture can be negative)."""
RATIO_DENOMINATORS = {"localization_share": "z_information"}
"""A ratio metric and the metric in its denominator: n/a where that one's interval holds 0."""


def metric_bounds(metric: str, latent_dim: int | None = None) -> tuple[float, float]:
    """(lower, upper) of `metric`; (−inf, inf) when it has none."""
    low, high = METRIC_BOUNDS.get(metric, (-math.inf, math.inf))
    if high == LATENT_DIM_BOUND:
        high = float(latent_dim) if latent_dim is not None else math.inf
    return float(low), float(high)


def clip_to_bounds(stats: Interval, metric: str, latent_dim: int | None = None) -> Interval:
    """`stats` with its interval intersected with the metric's range (the mean is inside it)."""
    return clip(stats, *metric_bounds(metric, latent_dim))
