"""Scale-free control (docs/method.md#scale-free-control): a variant is the shape of its
weighting. R is divided by its value R₀ on the frozen base over the train split, so weights
k·λ and λ train to the same parameters, and dist_normalized (R_mean / N) is token_mean."""

from __future__ import annotations

import pytest
import torch
from test_train_cvae import (
    CPU,
    DEFAULT_VARIANTS,
    SEED,
    _fresh_cvae,
    _short_common,
    _train_inputs,
)

from zgain.cvae.fit import fit_cvae
from zgain.cvae.model import CVAE
from zgain.cvae.objective import Objective, reconstruction_scale
from zgain.params import CommonCVAEParams, Params, ResolvedVariant

STEPS = 40
EPS = 0.01
# Scaling by a power of two is exact in floating point, so those twins train bit for bit alike;
# another factor, or the global N of dist_normalized, changes the last bits of the loss only,
# which Adam's normalized steps carry to the parameters at about lr·(rounding) per step.
ROUNDING_TOL = 1e-4
# Without the scale the same twins meet β at another strength: their parameters differ by
# at least this many times the rounding tolerance (so the test can tell the two apart).
UNSCALED_FACTOR = 10.0


def train(
    params: Params, common: CommonCVAEParams, variant: ResolvedVariant, *, scale_free: bool = True
) -> tuple[CVAE, float]:
    """One rate-targeted run of `variant` at C = 1 on the tiny world: (model, final β). With
    scale_free False the reconstruction is left at its own scale (R₀ = 1), as before the
    control existed."""
    train_batch, frozen, monitor, monitor_base = _train_inputs(params)
    surprisal = torch.from_numpy(frozen.surprisal)
    normalizer = frozen.normalizer.mean_surprisal
    objective = Objective.on_split(common, variant, normalizer, 1.0, surprisal, train_batch.mask)
    if not scale_free:
        objective = Objective(common, variant, normalizer, 1.0, 1.0)
    model = _fresh_cvae(params, common)
    last = fit_cvae(
        model,
        train_batch,
        surprisal,
        monitor,
        monitor_base,
        objective,
        seed=SEED,
        max_x_len=params.data.length_max,
        device=CPU,
        log=lambda step, values: None,
    )
    return model, last["beta"]


def scaled(variant: ResolvedVariant, k: float) -> ResolvedVariant:
    """`variant` with every weight multiplied by k (the same shape at another scale)."""
    return variant.model_copy(update={"weights": {n: k * w for n, w in variant.weights.items()}})


def max_parameter_difference(first: torch.nn.Module, second: torch.nn.Module) -> float:
    """max |θ₁ − θ₂| over every parameter and buffer of two models of one architecture."""
    a, b = first.state_dict(), second.state_dict()
    assert a.keys() == b.keys()
    return max((a[k].double() - b[k].double()).abs().max().item() for k in a)


def test_the_scale_is_the_reconstruction_on_the_frozen_base_by_hand():
    """Two examples: b = (1, 3 | masked) and (2, 2, 4); b_i = 2 and 8/3, N given as 2."""
    b = torch.tensor([[1.0, 3.0, 0.0], [2.0, 2.0, 4.0]])
    mask = torch.tensor([[True, True, False], [True, True, True]])
    mean_b = (2.0 + 8.0 / 3.0) / 2
    sum_b = (4.0 + 8.0) / 2
    kwargs = {"normalizer": 2.0, "eps": EPS}
    assert reconstruction_scale(b, mask, weights={"mean": 1.0}, **kwargs) == pytest.approx(mean_b)
    assert reconstruction_scale(b, mask, weights={"sum": 1.0}, **kwargs) == pytest.approx(sum_b)
    assert reconstruction_scale(b, mask, weights={"dist": 1.0}, **kwargs) == pytest.approx(
        mean_b / 2.0
    )
    both = reconstruction_scale(b, mask, weights={"mean": 1.0, "sum": 3.0}, **kwargs)
    assert both == pytest.approx(mean_b + 3 * sum_b)


def test_a_weighting_without_a_positive_scale_is_refused():
    b = torch.zeros(2, 3)
    mask = torch.ones(2, 3, dtype=torch.bool)
    with pytest.raises(ValueError, match="frozen base must be finite and > 0, got 0.0"):
        reconstruction_scale(b, mask, weights={"mean": 1.0}, normalizer=1.0, eps=EPS)


@pytest.mark.parametrize("name", ["token_mean", "mean_cc"])
def test_the_loss_does_not_depend_on_the_variant_scale(tiny_pipeline, name):
    """At the entangled initialization (ℓ = b) R / R₀ is the same for λ and 3·λ, batch by batch."""
    train, frozen, _, _ = _train_inputs(tiny_pipeline)
    common = tiny_pipeline.cvae.common
    surprisal = torch.from_numpy(frozen.surprisal)
    normalizer = frozen.normalizer.mean_surprisal
    variant = DEFAULT_VARIANTS[name]
    one, three = (
        Objective.on_split(common, v, normalizer, 1.0, surprisal, train.mask)
        for v in (variant, scaled(variant, 3.0))
    )
    assert three.scale == pytest.approx(3 * one.scale, rel=1e-12)
    kl = torch.zeros(surprisal.shape[0], 1)
    recon = [
        o.loss(surprisal, surprisal, train.mask, kl, 0.1, None).recon.item() for o in (one, three)
    ]
    assert recon[0] == pytest.approx(recon[1], rel=1e-6)


@pytest.mark.parametrize(
    ("first", "second", "tolerance"),
    [
        (DEFAULT_VARIANTS["mean_cc"], scaled(DEFAULT_VARIANTS["mean_cc"], 4.0), 0.0),
        (DEFAULT_VARIANTS["token_mean"], scaled(DEFAULT_VARIANTS["token_mean"], 3.0), ROUNDING_TOL),
        (DEFAULT_VARIANTS["token_mean"], DEFAULT_VARIANTS["dist_normalized"], ROUNDING_TOL),
    ],
    ids=["mean_cc-x4", "token_mean-x3", "dist_normalized-token_mean"],
)
def test_scale_twins_train_to_the_same_parameters(tiny_pipeline, first, second, tolerance):
    """Rate-targeted training (the controller, the penalty and β's bounds all in play) of two
    variants whose weights differ by a constant factor ends at the same parameters and β;
    without the scale the same pair ends far apart."""
    common = _short_common(
        tiny_pipeline,
        steps=STEPS,
        log_every=STEPS,
        lr=tiny_pipeline.cvae.common.lr,
        beta_schedule="rate_target",
    )
    model_a, beta_a = train(tiny_pipeline, common, first)
    model_b, beta_b = train(tiny_pipeline, common, second)
    difference = max_parameter_difference(model_a, model_b)
    print(f"max |Δθ| after {STEPS} steps: {difference:.3e}")
    assert difference <= tolerance, f"max |Δθ| = {difference:.3e}"
    assert beta_a == pytest.approx(beta_b, rel=1e-4)
    unscaled = [train(tiny_pipeline, common, v, scale_free=False)[0] for v in (first, second)]
    apart = max_parameter_difference(*unscaled)
    print(f"without the scale: {apart:.3e}")
    assert apart > UNSCALED_FACTOR * ROUNDING_TOL, f"without the scale max |Δθ| = {apart:.3e}"
