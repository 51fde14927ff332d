"""zgain.core.gains: the decomposition's means, the same on tensors and arrays."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from zgain.core.gains import GAIN_KEYS, gain_means


def test_gain_means_by_hand() -> None:
    base, post, marginal = np.array([3.0, 5.0]), np.array([1.0, 4.0]), np.array([2.5, 4.5])
    gains = gain_means(base, post, marginal, np.array([0.5, 1.5]))
    assert tuple(gains) == GAIN_KEYS
    # gross (2 + 1)/2, marginal (0.5 + 0.5)/2, z-information (1.5 + 0.5)/2, kl (0.5 + 1.5)/2
    assert gains == {"gross_gain": 1.5, "marginal_gain": 0.5, "z_information": 1.0, "kl": 1.0}


def test_gross_is_marginal_plus_z_information_on_tensors() -> None:
    gen = torch.Generator().manual_seed(0)
    base, post, marginal, kl = (torch.rand(100, generator=gen, dtype=torch.float64) for _ in "bpmk")
    gains = gain_means(base, post, marginal, kl)
    gap = gains["gross_gain"] - gains["marginal_gain"] - gains["z_information"]
    assert abs(gap.item()) < 1e-12
    as_arrays = gain_means(*(t.numpy() for t in (base, post, marginal, kl)))
    for key in GAIN_KEYS:
        assert gains[key].item() == pytest.approx(float(as_arrays[key]), rel=1e-14)
