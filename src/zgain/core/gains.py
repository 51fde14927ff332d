"""The gain decomposition of a code length over the base: B − L = (B − M) + (M − L).

docs/method.md#evaluation-quantities. Per example, B is the base's code length, L the code length
with the posterior z, M the CVAE's own code length for y given x (z marginalized) and KL the
posterior's KL to the prior. One definition serves the validation monitor of training (torch
tensors on the device) and the evaluation (NumPy arrays); the values are means over examples.
"""

from __future__ import annotations

from typing import TypeVar

import numpy as np
from torch import Tensor

A = TypeVar("A", Tensor, np.ndarray)

GAIN_KEYS = ("gross_gain", "marginal_gain", "z_information", "kl")


def gain_means(base: A, post: A, marginal: A, kl: A) -> dict[str, A]:
    """gross mean(B − L), marginal G^marg = mean(B − M), z-information I^θ = mean(M − L) and the
    mean KL, keyed by GAIN_KEYS; every input (N,) per example, in nats."""
    return {
        "gross_gain": (base - post).mean(),
        "marginal_gain": (base - marginal).mean(),
        "z_information": (marginal - post).mean(),
        "kl": kl.mean(),
    }
