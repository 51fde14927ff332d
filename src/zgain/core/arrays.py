"""Checked numpy conversions shared by the evaluation and the report."""

from __future__ import annotations

import numpy as np


def as_vector(name: str, values: np.ndarray, n: int | None = None) -> np.ndarray:
    """Return ``values`` as a finite float64 (n,) vector or raise ValueError naming it."""
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim != 1 or (n is not None and arr.shape[0] != n):
        expected = "(N,)" if n is None else f"({n},)"
        raise ValueError(f"{name} must have shape {expected}, got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains non-finite values")
    return arr
