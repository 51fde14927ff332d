"""Power and design: the power of the two-sided t-test and the sample-size searches, the
smallest detectable difference, the variance components of a one-way random-effects layout
(bases × seeds) with their upper bounds, the seeds per base that minimise a budget's variance,
and `zgain check`'s probability that a fresh mean falls inside a committed interval
(docs/method.md#claims-about-the-procedure).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from scipy.optimize import brentq
from scipy.stats import nct
from scipy.stats import t as student_t

from zgain.stats.intervals import half_width, spread_upper_bound, t_quantile
from zgain.stats.rule import MIN_SEEDS

SEEDS_CAP = 100  # sample-size searches stop here
POWER = 0.8  # the power the sample-size and detectable-difference searches aim at
SPREAD_UPPER = 0.8  # one-sided level of the upper bound on σ the replicate search assumes


def t_test_power(noncentrality: float, n: int, confidence: float) -> float:
    """P(|T| > t_{(1+c)/2, n−1}) for T ~ nct(n − 1, noncentrality): the power of the two-sided
    t-test over n replicates at level 1 − c when the true mean is noncentrality · SE.

    The lower tail P(T < −t) is taken as P(T' > t), T' ~ nct(n − 1, −noncentrality) (the same
    by symmetry): scipy's nct.cdf far in the lower tail can return NaN where nct.sf does not.
    """
    df = n - 1
    critical = t_quantile(confidence, n)
    return float(nct.sf(critical, df, noncentrality) + nct.sf(critical, df, -noncentrality))


def smallest_n(meets: Callable[[int], bool], first: int, cap: int = SEEDS_CAP) -> int | None:
    """The smallest n in [first, cap] for which `meets(n)` holds (None when none does): the
    one sample-size search (replicates for a power, seeds for a half-width)."""
    return next((n for n in range(first, cap + 1) if meets(n)), None)


def replicates_needed(mean: float, sd: float, n: int, alpha: float) -> float:
    """The smallest n' ≥ MIN_SEEDS with POWER to separate `mean` from 0 at level `alpha`, σ at
    its SPREAD_UPPER upper bound from the n observed replicates of sample sd `sd`: NaN without
    a spread (n < 2, an undefined value, or mean 0), inf beyond SEEDS_CAP."""
    if n < 2 or not (math.isfinite(mean) and math.isfinite(sd)) or mean == 0.0:
        return math.nan
    sigma = spread_upper_bound(sd, n, SPREAD_UPPER)
    if sigma == 0.0:
        return float(MIN_SEEDS)

    def powered(size: int) -> bool:
        return t_test_power(abs(mean) * math.sqrt(size) / sigma, size, 1.0 - alpha) >= POWER

    size = smallest_n(powered, MIN_SEEDS)
    return float(size) if size else math.inf


def seeds_for_half_width(sd: float, target: float, confidence: float) -> int | None:
    """Smallest n ≥ 2 with t_{(1+c)/2, n−1} · sd/√n ≤ target (None beyond SEEDS_CAP or with an
    undefined sd)."""
    if not math.isfinite(sd):
        return None
    return smallest_n(lambda n: half_width(sd, n, confidence) / math.sqrt(n) <= target, 2)


def detectable_noncentrality(n: int, confidence: float, power: float) -> float:
    """The noncentrality |Δ|/SE at which the two-sided t-test over n replicates at level 1 − c
    has probability `power` of rejecting; 0 when power ≤ 1 − c (Δ = 0 already rejects that
    often)."""
    if not 0.0 < power < 1.0:
        raise ValueError(f"power must be in (0, 1), got {power}")
    if power <= t_test_power(0.0, n, confidence):
        return 0.0

    def shortfall(noncentrality: float) -> float:
        return t_test_power(noncentrality, n, confidence) - power

    high = t_quantile(confidence, n) + 1.0
    while shortfall(high) < 0.0:
        high *= 2.0
    return float(brentq(shortfall, 0.0, high, xtol=1e-12, rtol=1e-12))


def detectable_difference(
    sigma_b: float,
    sigma_w: float,
    n_bases: int,
    seeds_per_base: float,
    confidence: float,
    power: float = POWER,
) -> float:
    """Smallest |Δ| (value units) that the two-sided t-test over n_bases per-base means, each of
    seeds_per_base seeds, at level 1 − confidence detects with probability `power`:
    noncentrality · √(σ_B² + σ_W²/k) / √b.

    NaN when n_bases < 2 or σ_B is NaN; 0 when power ≤ 1 − confidence or both σ are 0. A NaN
    σ_W (one seed per base) counts as 0: σ_B is then the whole spread of the per-base means.
    """
    if not 0.0 < power < 1.0:
        raise ValueError(f"power must be in (0, 1), got {power}")
    if not seeds_per_base > 0:
        raise ValueError(f"seeds_per_base must be positive, got {seeds_per_base}")
    if n_bases < 2 or math.isnan(sigma_b):
        return math.nan
    if math.isnan(sigma_w):
        sigma_w = 0.0
    se = math.sqrt(sigma_b**2 + sigma_w**2 / seeds_per_base) / math.sqrt(n_bases)
    if se == 0.0:
        return 0.0
    return detectable_noncentrality(n_bases, confidence, power) * se


def seeds_per_base(
    cost_base: float, cost_replicate: float, sigma_b: float, sigma_w: float
) -> float:
    """k* = √(c_B σ_W² / (c_s σ_B²)): the seeds per base that minimise the variance of the grand
    mean, (σ_B² + σ_W²/k) / b, for a fixed budget b (c_B + k c_s).

    c_B (cost_base) is the cost of one base, c_s (cost_replicate) of one seed on it, in the same
    units; inf when σ_B = 0 (only seeds reduce the variance).
    """
    if not (cost_base > 0 and cost_replicate > 0):
        raise ValueError(f"costs must be positive, got {cost_base} and {cost_replicate}")
    if sigma_b == 0.0:
        return math.inf
    return math.sqrt(cost_base * sigma_w**2 / (cost_replicate * sigma_b**2))


def inside_probability(n_committed: int, n_fresh: int, confidence: float) -> float:
    """P(a fresh mean of n_f seeds lies inside the committed t-interval over n seeds at level c)
    when both runs' seed values are independent draws from one normal distribution: the fresh
    mean f and the committed mean m differ by N(0, σ²(1/n + 1/n_f)) and the interval is
    m ± t_c·s/√n, so (f − m)/(s·√(1/n + 1/n_f)) ~ t_{n−1} and the probability is
    P(|t_{n−1}| ≤ t_c/√(1 + n/n_f))."""
    bound = t_quantile(confidence, n_committed) / math.sqrt(1.0 + n_committed / n_fresh)
    return float(2.0 * student_t.cdf(bound, df=n_committed - 1) - 1.0)
