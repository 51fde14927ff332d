"""The masked per-token NLL and the masked reductions (zgain.core.nll)."""

from __future__ import annotations

import pytest
import torch

from zgain.core.nll import masked_mean, masked_sum, token_nll


def test_token_nll_is_negative_log_softmax_and_zero_where_masked() -> None:
    gen = torch.Generator().manual_seed(12)
    logits = torch.randn(2, 3, 5, generator=gen)
    targets = torch.tensor([[1, 4, 4], [0, 2, -100]])  # 4 plays PAD, −100 an out-of-range id
    mask = torch.tensor([[True, False, False], [True, True, False]])
    nll = token_nll(logits, targets, mask)
    log_probs = torch.log_softmax(logits, dim=-1)
    assert nll.shape == (2, 3)
    assert nll[0, 0].item() == pytest.approx(-log_probs[0, 0, 1].item())
    assert nll[1, 0].item() == pytest.approx(-log_probs[1, 0, 0].item())
    assert nll[1, 1].item() == pytest.approx(-log_probs[1, 1, 2].item())
    assert (nll[~mask] == 0).all()


def test_masked_sum_and_mean_ignore_unsupervised_positions() -> None:
    values = torch.tensor([[1.0, 2.0, 100.0], [4.0, float("nan"), float("inf")]])
    mask = torch.tensor([[True, True, False], [True, False, False]])
    assert masked_sum(values, mask).tolist() == [3.0, 4.0]
    assert masked_mean(values, mask).tolist() == [1.5, 4.0]


def test_token_nll_rejects_mismatched_shapes() -> None:
    with pytest.raises(ValueError, match="need logits"):
        token_nll(torch.zeros(2, 3, 5), torch.zeros(2, 4, dtype=torch.long), torch.ones(2, 4))
