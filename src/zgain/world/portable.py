"""exp, log, logsumexp and cos built from IEEE-754 basic operations only (+, −, ×, ÷, rint,
frexp, ldexp), so that the world and its oracle come out bit for bit the same on every x86-64
CPU (docs/method.md#the-same-bytes-on-every-cpu).

numpy's own `np.exp`/`np.log`/`np.cos` pick a kernel by the CPU's vector extensions (AVX-512,
AVX2, scalar libm), and those kernels round the last bit differently: the same params then
wrote different `data/synthetic` files on two machines, and every stage downstream differed.
Basic operations are correctly rounded by IEEE-754 whatever the kernel, and numpy never fuses a
multiply and an add, so a polynomial written with them gives one result everywhere. Accuracy:
within 4 ulp of the correctly rounded value on the ranges the world uses (tested).
"""

from __future__ import annotations

import math

import numpy as np

# ln 2 split so that k·LN2_HI is exact for |k| < 2^20 (LN2_HI has its low 32 bits zero).
LN2_HI = 6.93147180369123816490e-01
LN2_LO = 1.90821492927058770002e-10
INV_LN2 = 1.44269504088896338700e00
SQRT_HALF = 0.7071067811865476
# exp(r) on |r| ≤ ln2/2 by Taylor to r^15/15!: the first term left out is < 3e-20 relative.
EXP_TERMS = 16
# log(m) = 2·atanh(s), s = (m−1)/(m+1), |s| ≤ 0.1716 on m ∈ [√½, √2): the series in s² to
# s^25/25 leaves out < 1e-21.
ATANH_TERMS = 13
# cos(a) on 0 ≤ a ≤ π/2 by Taylor to a^30/30!: the first term left out is < 1e-25.
COS_TERMS = 16
EXP_OVERFLOW = 709.78  # exp of more is inf in float64


def exp(x: np.ndarray | float) -> np.ndarray:
    """e^x elementwise, float64; exp(−inf) = 0, exp(+inf) = inf, nan stays nan."""
    x = np.asarray(x, dtype=np.float64)
    finite = np.isfinite(x) & (x < EXP_OVERFLOW)
    xs = np.where(finite, x, 0.0)
    k = np.rint(xs * INV_LN2)
    r = (xs - k * LN2_HI) - k * LN2_LO  # |r| ≤ ln2/2 (+ a few ulp)
    poly = np.ones_like(r)
    for n in range(EXP_TERMS - 1, 0, -1):  # Horner: 1 + r/1 (1 + r/2 (1 + … ))
        poly = 1.0 + (r / n) * poly
    out = np.ldexp(poly, k.astype(np.int64))
    out = np.where(finite, out, np.where(x >= EXP_OVERFLOW, np.inf, 0.0))
    return np.where(np.isnan(x), np.nan, out)


def log(x: np.ndarray | float) -> np.ndarray:
    """Natural log elementwise, float64; log(0) = −inf, log(inf) = inf, log(x < 0) = nan."""
    x = np.asarray(x, dtype=np.float64)
    ok = np.isfinite(x) & (x > 0)
    m, e = np.frexp(np.where(ok, x, 1.0))  # x = m·2^e, m ∈ [½, 1): both exact
    low = m < SQRT_HALF
    m = np.where(low, m * 2.0, m)  # exact
    e = np.where(low, e - 1, e).astype(np.float64)
    f = m - 1.0  # exact (Sterbenz)
    s = f / (2.0 + f)
    s2 = s * s
    series = np.full_like(s, 1.0 / (2 * ATANH_TERMS - 1))
    for j in range(ATANH_TERMS - 2, -1, -1):
        series = 1.0 / (2 * j + 1) + s2 * series
    log_m = 2.0 * s * series
    out = e * LN2_HI + (e * LN2_LO + log_m)
    special = np.where(x == 0, -np.inf, np.where(x == np.inf, np.inf, np.nan))
    return np.where(ok, out, special)


def logsumexp(a: np.ndarray, axis: int, keepdims: bool = False) -> np.ndarray:
    """log Σ exp(a) along `axis` (−inf where every entry is −inf), with this module's exp/log."""
    a = np.asarray(a, dtype=np.float64)
    top = np.max(a, axis=axis, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        out = log(np.sum(exp(a - top), axis=axis, keepdims=True)) + top
    return out if keepdims else np.squeeze(out, axis=axis)


def cos_turns(numerator: np.ndarray, denominator: int) -> np.ndarray:
    """cos(2π·numerator/denominator) for integer numerators, float64.

    The angle is reduced to [0, π/2] with integer arithmetic (exact), then a Taylor series in
    basic operations; accurate to a few ulp (tested against math.cos).
    """
    j = np.mod(np.asarray(numerator, dtype=np.int64), denominator)
    j = np.minimum(j, denominator - j)  # cos is even and 2π-periodic: j ∈ [0, D/2]
    # cos(a) = −cos(π − a): fold the quarter-turns beyond π/2 back into [0, π/2]
    flip = 4 * j > denominator
    j = np.where(flip, denominator - 2 * j, 2 * j)  # now the angle is π·j/D ∈ [0, π/2]
    a = (math.pi * j.astype(np.float64)) / denominator
    a2 = a * a
    series = np.ones_like(a)
    for n in range(COS_TERMS - 1, 0, -1):  # 1 − a²/(1·2) (1 − a²/(3·4) (…))
        series = 1.0 - (a2 / ((2 * n - 1) * (2 * n))) * series
    return np.where(flip, -series, series)
