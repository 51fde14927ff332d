"""The fit loop's optimizer: Adam's fused kernel on CPU gives the update of the per-tensor loop."""

from __future__ import annotations

import torch

from zgain.cvae.member import fused_adam


def _trained(fused: bool, steps: int = 20) -> list[torch.Tensor]:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.GELU(), torch.nn.Linear(16, 3))
    groups = [
        {"params": list(model[0].parameters()), "lr": 4e-3},
        {"params": list(model[2].parameters()), "lr": 2e-4},
    ]
    optimizer = torch.optim.Adam(groups, fused=fused)
    data = torch.Generator().manual_seed(1)
    for _ in range(steps):
        x = torch.randn(32, 8, generator=data)
        loss = model(x).pow(2).mean()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    return [p.detach().clone() for p in model.parameters()]


def test_the_fused_update_equals_the_per_tensor_update_within_float_rounding() -> None:
    assert fused_adam(torch.device("cpu")) and fused_adam(torch.device("cuda"))
    assert not fused_adam(torch.device("mps"))
    start = _trained(False, steps=0)
    for fused, loop in zip(_trained(True), _trained(False), strict=True):
        torch.testing.assert_close(fused, loop, rtol=0, atol=1e-6)
    # ...and the parameters did move (by far more than that tolerance)
    moved = [(p - q).abs().max().item() for p, q in zip(_trained(True), start, strict=True)]
    assert max(moved) > 1e-2
