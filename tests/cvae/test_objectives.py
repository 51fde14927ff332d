"""Facts about the reconstruction terms (the registry), KL terms and β schedules.

docs/method.md#reconstruction-terms and docs/method.md#the-loss-and-kl-schedules.
"""

from __future__ import annotations

import math
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
from torch import Tensor

from zgain.core.nll import masked_mean
from zgain.cvae.objective import bow_loss, free_bits_kl, loss_terms, reconstruction
from zgain.cvae.rate import beta_at
from zgain.cvae.terms import (
    TERMS,
    TermBatch,
    concentration,
    concentration_correction,
    formula,
    inverse_surprisal_weights,
    term,
    token_share_weights,
)
from zgain.params import UnifiedParams

# The rows of the term table; `unified` is the family that contains them (tested below).
RECON_TERMS = tuple(name for name in TERMS if name != "unified")


def reconstruction_terms(
    nll: Tensor, surprisal: Tensor, mask: Tensor, normalizer: float, eps: float
) -> SimpleNamespace:
    """Every registered row term of one batch, by name."""
    batch = TermBatch(nll, surprisal, mask, normalizer, eps)
    return SimpleNamespace(**{name: TERMS[name](batch) for name in RECON_TERMS})


def unified_reconstruction(
    nll: Tensor, surprisal: Tensor, mask: Tensor, *, normalizer: float, eps: float, **settings
) -> Tensor:
    """The registry's `unified` term with the given settings."""
    batch = TermBatch(nll, surprisal, mask, normalizer, eps, UnifiedParams(**settings))
    return TERMS["unified"](batch)


def as_terms(*values: float) -> dict[str, Tensor]:
    """A terms mapping in registry order with the given values (the rest 0)."""
    padded = list(values) + [0.0] * (len(TERMS) - len(values))
    return {name: torch.tensor(v) for name, v in zip(TERMS, padded, strict=True)}


NAN = float("nan")
INF = float("inf")
HUGE = 1e30
EPS = 0.01
N = 1.5
TINY_EPS = 1e-9

# A ragged batch with T_i = 1, 2, 3; positions past T_i hold garbage that must not count.
MASK = torch.tensor([[True, False, False], [True, True, False], [True, True, True]])
NLL = torch.tensor([[2.0, HUGE, NAN], [1.0, 3.0, -5.0], [0.5, 1.5, 7.0]], dtype=torch.float64)
SURPRISAL = torch.tensor([[1.0, NAN, HUGE], [2.0, 0.5, INF], [1.0, 2.0, 3.0]], dtype=torch.float64)


def hand_terms() -> dict[str, float]:
    """Every row term of the ragged batch, written out with plain floats (ε = 0.01, N = 1.5)."""
    e = EPS
    # Example 0: ℓ = [2], b = [1]. Example 1: ℓ = [1, 3], b = [2, .5]. Example 2: ℓ = [.5, 1.5, 7],
    # b = [1, 2, 3]. Token-means ℓ̄ = 2, 2, 3; sums L = 2, 4, 9; b_i = 1, 1.25, 2; B = 1, 2.5, 6.
    r_mean = (2.0 + 2.0 + 3.0) / 3
    r_sum = (2.0 + 4.0 + 9.0) / 3
    r_ex = (2.0 / (1.0 + e) + 2.0 / (1.25 + e) + 3.0 / (2.0 + e)) / 3
    # Σ_t w ℓ with w = b / (B + ε).
    tok0 = 1.0 * 2.0 / (1.0 + e)
    tok1 = (2.0 * 1.0 + 0.5 * 3.0) / (2.5 + e)
    tok2 = (1.0 * 0.5 + 2.0 * 1.5 + 3.0 * 7.0) / (6.0 + e)
    # c = b_i / (Σ_t w b + ε) with Σ_t w b = Σ b² / (B + ε).
    c0 = 1.0 / (1.0 / (1.0 + e) + e)
    c1 = 1.25 / ((4.0 + 0.25) / (2.5 + e) + e)
    c2 = 2.0 / ((1.0 + 4.0 + 9.0) / (6.0 + e) + e)
    # v ∝ 1 / (b + ε); example 0 has one token, so v = 1 there.
    inv1 = [1.0 / (2.0 + e), 1.0 / (0.5 + e)]
    inv2 = [1.0 / (1.0 + e), 1.0 / (2.0 + e), 1.0 / (3.0 + e)]
    z1, z2 = sum(inv1), sum(inv2)
    vl0, vb0 = 2.0, 1.0
    vl1 = (inv1[0] * 1.0 + inv1[1] * 3.0) / z1
    vb1 = (inv1[0] * 2.0 + inv1[1] * 0.5) / z1
    vl2 = (inv2[0] * 0.5 + inv2[1] * 1.5 + inv2[2] * 7.0) / z2
    vb2 = (inv2[0] * 1.0 + inv2[1] * 2.0 + inv2[2] * 3.0) / z2
    cp0, cp1, cp2 = 1.0 / (vb0 + e), 1.25 / (vb1 + e), 2.0 / (vb2 + e)
    return {
        "mean": r_mean,
        "sum": r_sum,
        "dist": r_mean / N,
        "ex": r_ex,
        "tok": (tok0 + tok1 + tok2) / 3,
        "cc": (c0 * tok0 + c1 * tok1 + c2 * tok2) / 3 / N,
        "inv": (cp0 * vl0 + cp1 * vl1 + cp2 * vl2) / 3 / N,
    }


def random_batch(seed: int, lengths: list[int]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(nll, surprisal, mask) with positive values, ragged lengths and garbage past each T_i."""
    gen = torch.Generator().manual_seed(seed)
    t_max = max(lengths)
    mask = torch.arange(t_max)[None, :] < torch.tensor(lengths)[:, None]
    nll = torch.rand(len(lengths), t_max, generator=gen, dtype=torch.float64) * 4 + 0.1
    surprisal = torch.rand(len(lengths), t_max, generator=gen, dtype=torch.float64) * 4 + 0.1
    nll = torch.where(mask, nll, HUGE)
    surprisal = torch.where(mask, surprisal, NAN)
    return nll, surprisal, mask


def test_registry_holds_every_term_in_table_order_with_its_formula() -> None:
    assert tuple(TERMS) == ("mean", "sum", "dist", "ex", "tok", "cc", "inv", "unified")
    for name in TERMS:
        assert formula(name).startswith("R_"), name


def test_registering_a_name_twice_or_without_formula_is_refused() -> None:
    with pytest.raises(ValueError, match="registered twice"):
        term("mean")(lambda batch: batch.mean_nll.mean())

    def undocumented(batch: TermBatch) -> Tensor:
        return batch.mean_nll.mean()

    with pytest.raises(ValueError, match="docstring"):
        term("undocumented")(undocumented)
    assert "undocumented" not in TERMS


def test_docs_list_every_registered_term() -> None:
    docs = (Path(__file__).resolve().parents[2] / "docs" / "method.md").read_text()
    for name in TERMS:
        assert f"### {name}" in docs, name


@pytest.mark.parametrize("name", RECON_TERMS)
def test_each_term_matches_hand_computation(name: str) -> None:
    terms = reconstruction_terms(NLL, SURPRISAL, MASK, normalizer=N, eps=EPS)
    assert getattr(terms, name).item() == pytest.approx(hand_terms()[name], rel=1e-12)


def test_garbage_at_masked_positions_leaks_into_no_gradient() -> None:
    nll = NLL.clone().requires_grad_(True)
    terms = reconstruction_terms(nll, SURPRISAL, MASK, normalizer=N, eps=EPS)
    sum(vars(terms).values()).backward()
    assert torch.isfinite(nll.grad).all()
    assert (nll.grad[~MASK] == 0).all()
    assert (nll.grad[MASK] > 0).all()


def test_at_entangled_init_cc_and_inv_equal_mean_surprisal_over_normalizer() -> None:
    _, surprisal, mask = random_batch(0, [1, 4, 7, 2, 9])
    b_mean = masked_mean(surprisal, mask)
    terms = reconstruction_terms(surprisal, surprisal, mask, normalizer=N, eps=TINY_EPS)
    expected = b_mean.mean().item() / N
    assert terms.cc.item() == pytest.approx(expected, abs=1e-6)
    assert terms.inv.item() == pytest.approx(expected, abs=1e-6)


def test_concentration_correction_is_inverse_participation_ratio() -> None:
    _, surprisal, mask = random_batch(1, [1, 3, 5, 8])
    weights = token_share_weights(surprisal, mask, TINY_EPS)
    correction = concentration_correction(weights, surprisal, mask, TINY_EPS)
    lengths = mask.sum(dim=1).to(torch.float64)
    torch.testing.assert_close(correction, 1 / (lengths * concentration(weights, mask)))


def test_more_concentrated_surprisal_gets_smaller_example_weight() -> None:
    mask = torch.ones(2, 4, dtype=torch.bool)
    surprisal = torch.tensor([[1.0, 1.0, 1.0, 1.0], [4.0, 0.0, 0.0, 0.0]], dtype=torch.float64)
    weights = token_share_weights(surprisal, mask, TINY_EPS)
    correction = concentration_correction(weights, surprisal, mask, TINY_EPS)
    # Uniform: Σ w² = 1/T, c = 1. All on one token: Σ w² = 1, c = 1/T.
    torch.testing.assert_close(concentration(weights, mask), torch.tensor([0.25, 1.0]).double())
    torch.testing.assert_close(correction, torch.tensor([1.0, 0.25]).double())


def test_ratio_of_means_differs_from_mean_of_ratios_when_surprisal_varies() -> None:
    nll, surprisal, mask = random_batch(2, [2, 3, 5])
    normalizer = masked_mean(surprisal, mask).mean().item()
    terms = reconstruction_terms(nll, surprisal, mask, normalizer=normalizer, eps=TINY_EPS)
    assert abs(terms.dist.item() - terms.ex.item()) > 1e-3


def test_ratio_of_means_equals_mean_of_ratios_when_surprisal_is_constant() -> None:
    nll, _, mask = random_batch(3, [2, 3, 5])
    surprisal = torch.full_like(nll, 1.7)
    terms = reconstruction_terms(nll, surprisal, mask, normalizer=1.7, eps=TINY_EPS)
    assert terms.dist.item() == pytest.approx(terms.ex.item(), rel=1e-8)


def test_example_inverse_weighting_scales_gradient_by_inverse_surprisal() -> None:
    nll, surprisal, mask = random_batch(4, [1, 3, 6])
    nll.requires_grad_(True)
    reconstruction_terms(nll, surprisal, mask, normalizer=N, eps=EPS).ex.backward()
    lengths = mask.sum(dim=1, keepdim=True).to(torch.float64)
    b_mean = masked_mean(surprisal, mask)[:, None]
    # ∂R_ex/∂ℓ_{i,t} = 1 / (B · T_i · (b_i + ε)): ∂R_ex/∂ℓ̄_i ∝ 1 / (b_i + ε).
    scaled = nll.grad * 3 * lengths * (b_mean + EPS)
    torch.testing.assert_close(scaled[mask], torch.ones(int(mask.sum()), dtype=torch.float64))
    assert (nll.grad[~mask] == 0).all()


def test_surprisal_gap_has_the_gradient_of_plain_mean() -> None:
    nll, surprisal, mask = random_batch(5, [2, 4, 3])
    nll.requires_grad_(True)
    # The diagnostic b_i − ℓ̄_i with frozen b: minimising its negation is minimising R_mean.
    gap = (masked_mean(surprisal, mask) - masked_mean(nll, mask)).mean()
    (gap_grad,) = torch.autograd.grad(-gap, nll)
    terms = reconstruction_terms(nll, surprisal, mask, normalizer=N, eps=EPS)
    (mean_grad,) = torch.autograd.grad(terms.mean, nll, retain_graph=True)
    (ex_grad,) = torch.autograd.grad(terms.ex, nll)
    torch.testing.assert_close(gap_grad, mean_grad)
    assert not torch.allclose(ex_grad * N, mean_grad)


def test_weights_carry_no_gradient() -> None:
    nll, surprisal, mask = random_batch(6, [3, 1, 4])
    nll.requires_grad_(True)
    surprisal.requires_grad_(True)
    share = token_share_weights(surprisal, mask, EPS)
    inverse = inverse_surprisal_weights(surprisal, mask, EPS)
    correction = concentration_correction(share, surprisal, mask, EPS)
    assert not (share.requires_grad or inverse.requires_grad or correction.requires_grad)
    terms = reconstruction_terms(nll, surprisal, mask, normalizer=N, eps=EPS)
    every_option = dict(alpha=1.0, gamma=1.0, concentration=True, token_sum=True, eta=1.0)
    unified = unified_reconstruction(nll, surprisal, mask, normalizer=N, eps=EPS, **every_option)
    (sum(vars(terms).values()) + unified).backward()
    assert surprisal.grad is None
    assert nll.grad is not None


def test_inverse_surprisal_weights_sum_to_one_and_favour_easy_tokens() -> None:
    weights = inverse_surprisal_weights(SURPRISAL, MASK, EPS)
    torch.testing.assert_close(weights.sum(dim=1), torch.ones(3, dtype=torch.float64))
    assert (weights[~MASK] == 0).all()
    assert weights[1, 1] > weights[1, 0]  # b = 0.5 < 2.0


UNIFIED_ROWS = {
    "mean": dict(alpha=0.0, gamma=0.0, concentration=False, token_sum=False, eta=0.0),
    "sum": dict(alpha=0.0, gamma=0.0, concentration=False, token_sum=True, eta=0.0),
    "dist": dict(alpha=0.0, gamma=0.0, concentration=False, token_sum=False, eta=1.0),
    "ex": dict(alpha=0.0, gamma=1.0, concentration=False, token_sum=False, eta=0.0),
    "tok": dict(alpha=1.0, gamma=0.0, concentration=False, token_sum=False, eta=0.0),
    "cc": dict(alpha=1.0, gamma=0.0, concentration=True, token_sum=False, eta=1.0),
    "inv": dict(alpha=-1.0, gamma=0.0, concentration=True, token_sum=False, eta=1.0),
}


@pytest.mark.parametrize("name", RECON_TERMS)
def test_unified_reconstruction_reproduces_each_row(name: str) -> None:
    nll, surprisal, mask = random_batch(7, [1, 2, 5, 3])
    terms = reconstruction_terms(nll, surprisal, mask, normalizer=N, eps=TINY_EPS)
    unified = unified_reconstruction(
        nll, surprisal, mask, normalizer=N, eps=TINY_EPS, **UNIFIED_ROWS[name]
    )
    assert unified.item() == pytest.approx(getattr(terms, name).item(), rel=1e-8)


def test_unified_share_weights_differ_from_row_by_order_eps() -> None:
    nll, surprisal, mask = random_batch(8, [2, 4])
    terms = reconstruction_terms(nll, surprisal, mask, normalizer=N, eps=EPS)
    unified = unified_reconstruction(
        nll, surprisal, mask, normalizer=N, eps=EPS, **UNIFIED_ROWS["tok"]
    )
    gap = abs(unified.item() - terms.tok.item())
    assert 0 < gap < 10 * EPS * terms.tok.item()


def test_free_bits_clamps_each_dimension() -> None:
    kl = torch.tensor([[0.1, 2.0], [0.3, 4.0]], requires_grad=True)
    # Batch means per dim: 0.2 (below the 0.5 floor → 0.5) and 3.0 (above → 3.0).
    clamped = free_bits_kl(kl, 0.5)
    assert clamped.item() == pytest.approx(0.5 + 3.0)
    clamped.backward()
    torch.testing.assert_close(kl.grad, torch.tensor([[0.0, 0.5], [0.0, 0.5]]))
    assert free_bits_kl(kl, 0.0).item() == pytest.approx(0.2 + 3.0)
    with pytest.raises(ValueError, match="free_bits"):
        free_bits_kl(kl, -0.1)


SCHEDULE_DEFAULTS = dict(beta=0.8, warmup_steps=100, n_cycles=4, ramp_fraction=0.4, total_steps=100)


def test_constant_schedule_is_beta_everywhere() -> None:
    for step in (0, 1, 50, 10_000):
        assert beta_at(step, schedule="constant", **SCHEDULE_DEFAULTS) == 0.8


def test_linear_schedule_hits_its_endpoints() -> None:
    values = [beta_at(s, schedule="linear", **SCHEDULE_DEFAULTS) for s in (0, 50, 100, 500)]
    assert values == pytest.approx([0.0, 0.4, 0.8, 0.8])
    no_warmup = {**SCHEDULE_DEFAULTS, "warmup_steps": 0}
    assert beta_at(0, schedule="linear", **no_warmup) == 0.8


def test_cyclical_schedule_restarts_each_cycle_and_reaches_beta_at_ramp_end() -> None:
    # 4 cycles of 25 steps, each ramping over its first 10 steps.
    def at(step: int) -> float:
        return beta_at(step, schedule="cyclical", **SCHEDULE_DEFAULTS)

    assert [at(s) for s in (0, 25, 50, 75)] == [0.0, 0.0, 0.0, 0.0]
    assert [at(s) for s in (10, 35, 60, 85)] == pytest.approx([0.8] * 4)
    assert at(5) == pytest.approx(0.4)
    assert at(24) == pytest.approx(0.8)
    assert at(100) == at(1000) == 0.8


@pytest.mark.parametrize(
    ("schedule", "override", "argument"),
    [
        ("warm", {}, "schedule"),
        ("constant", {"beta": -1.0}, "beta"),
        ("linear", {"warmup_steps": -1}, "warmup_steps"),
        ("cyclical", {"n_cycles": 0}, "n_cycles"),
        ("cyclical", {"ramp_fraction": 0.0}, "ramp_fraction"),
        ("cyclical", {"ramp_fraction": 1.5}, "ramp_fraction"),
        ("cyclical", {"total_steps": 2}, "total_steps"),
    ],
)
def test_schedule_rejects_bad_arguments(schedule: str, override: dict, argument: str) -> None:
    with pytest.raises(ValueError, match=argument):
        beta_at(5, schedule=schedule, **{**SCHEDULE_DEFAULTS, **override})  # type: ignore[arg-type]


def test_schedule_rejects_negative_step() -> None:
    with pytest.raises(ValueError, match="step"):
        beta_at(-1, schedule="constant", **SCHEDULE_DEFAULTS)


def test_reconstruction_is_the_hand_linear_combination() -> None:
    terms = as_terms(1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0)
    combined = reconstruction(terms, {"mean": 0.5, "tok": 2.0, "inv": -1.0, "cc": 0.0})
    assert combined.item() == pytest.approx(0.5 * 1.0 + 2.0 * 5.0 - 1.0 * 7.0)


def test_reconstruction_skips_zero_weight_terms() -> None:
    terms = as_terms(1.0, NAN, 3.0, INF, 5.0, 6.0, 7.0)
    assert reconstruction(terms, {"mean": 2.0, "sum": 0.0, "ex": 0.0}).item() == 2.0


def test_reconstruction_rejects_unknown_weight_name() -> None:
    terms = as_terms(*(1.0 for _ in TERMS))
    with pytest.raises(ValueError, match="token_weighted"):
        reconstruction(terms, {"mean": 1.0, "token_weighted": 1.0})


def test_reconstruction_terms_reject_bad_input() -> None:
    with pytest.raises(ValueError, match="normalizer"):
        reconstruction_terms(NLL, SURPRISAL, MASK, normalizer=0.0, eps=EPS)
    with pytest.raises(ValueError, match="eps"):
        reconstruction_terms(NLL, SURPRISAL, MASK, normalizer=N, eps=0.0)
    empty = MASK.clone()
    empty[0, 0] = False
    with pytest.raises(ValueError, match="supervised position"):
        reconstruction_terms(NLL, SURPRISAL, empty, normalizer=N, eps=EPS)
    with pytest.raises(ValueError, match="shape"):
        reconstruction_terms(NLL[:, :2], SURPRISAL, MASK, normalizer=N, eps=EPS)


def test_bow_loss_on_hand_example() -> None:
    # 3 content tokens with probabilities ¼, ½, ¼; id 3 is EOS and 4 is PAD.
    logits = torch.log(torch.tensor([[1.0, 2.0, 1.0], [1.0, 2.0, 1.0]]))
    targets = torch.tensor([[1, 1, 3, 4], [0, 2, 1, 0]])
    mask = torch.tensor([[True, True, True, False], [True, True, False, False]])
    expected = [-2 * math.log(0.5), -2 * math.log(0.25)]
    assert bow_loss(logits, targets, mask).tolist() == pytest.approx(expected)


def test_loss_terms_total_and_logged_names() -> None:
    kl_per_dim = torch.tensor([[0.1, 2.0], [0.3, 4.0]], dtype=torch.float64)
    bow = torch.tensor([1.0, 3.0, 5.0], dtype=torch.float64)
    weights = {"mean": 1.0, "cc": 2.0}
    rest = dict(kl_per_dim=kl_per_dim, beta=0.5, free_bits=0.5, bow=bow, bow_weight=0.1)
    parts = loss_terms(NLL, SURPRISAL, MASK, weights=weights, normalizer=N, eps=EPS, **rest)
    hand = hand_terms()
    recon = hand["mean"] + 2.0 * hand["cc"]
    assert parts.recon.item() == pytest.approx(recon)
    assert parts.kl.item() == pytest.approx((2.1 + 4.3) / 2)
    assert parts.kl_fb.item() == pytest.approx(0.5 + 3.0)
    assert parts.bow.item() == pytest.approx(3.0)
    assert parts.total.item() == pytest.approx(recon + 0.5 * 3.5 + 0.1 * 3.0)
    logged = parts.as_floats()
    fixed = ["total", "recon", "kl", "kl_fb", "bow", "beta"]
    # only the weighted terms are computed and logged
    assert list(logged) == [*fixed, "recon_mean", "recon_cc"]
    assert logged["beta"] == 0.5
    assert logged["recon_cc"] == pytest.approx(hand["cc"])
    assert all(value >= 0 for value in logged.values())


def test_loss_terms_without_bow() -> None:
    kl_per_dim = torch.zeros(3, 2, dtype=torch.float64)
    kwargs = dict(weights={"sum": 1.0}, normalizer=N, eps=EPS, kl_per_dim=kl_per_dim, beta=1.0)
    parts = loss_terms(NLL, SURPRISAL, MASK, free_bits=0.0, **kwargs)
    assert parts.bow is None
    assert "bow" not in parts.as_floats()
    assert parts.total.item() == pytest.approx(hand_terms()["sum"])
    with pytest.raises(ValueError, match="bow_weight"):
        loss_terms(NLL, SURPRISAL, MASK, free_bits=0.0, bow_weight=0.5, **kwargs)


def test_each_named_terms_registered_position_is_where_unified_reproduces_it() -> None:
    from zgain.cvae.terms import POSITIONS, TERMS, terms_used

    assert set(POSITIONS) == set(TERMS) - {"unified"} == set(UNIFIED_ROWS)
    for name, at in POSITIONS.items():
        row = UNIFIED_ROWS[name]  # the settings shown above to reproduce the term
        assert (at.alpha, at.gamma) == (row["alpha"], row["gamma"]), name
        assert ("concentration" in at.note) == row["concentration"], name
        assert ("token-sum" in at.note) == row["token_sum"], name
        assert ("η = 1" in at.note) == (row["eta"] == 1.0), name
    assert terms_used({"mean": 1.0, "tok": 0.0, "cc": 2.0}) == {"mean", "cc"}


@pytest.mark.parametrize(("target", "sign"), [(1.0, 1.0), (5.0, -1.0)])
def test_the_rate_penalty_adds_gamma_times_the_batch_kls_distance_from_its_target(
    target: float, sign: float
) -> None:
    """γ·|KL − C| on the raw batch-mean KL (3.2 here, free bits aside): its gradient pushes the
    KL down when above C and up when below, with force γ either way."""
    kl_per_dim = torch.tensor([[0.1, 2.0], [0.3, 4.0]], dtype=torch.float64, requires_grad=True)
    kwargs = dict(weights={"sum": 1.0}, normalizer=N, eps=EPS, beta=0.5, free_bits=0.5)
    plain = loss_terms(NLL, SURPRISAL, MASK, kl_per_dim=kl_per_dim, **kwargs)
    pinned = loss_terms(
        NLL, SURPRISAL, MASK, kl_per_dim=kl_per_dim, penalty=2.0, target=target, **kwargs
    )
    assert pinned.total.item() == pytest.approx(plain.total.item() + 2.0 * abs(3.2 - target))
    (extra,) = torch.autograd.grad(pinned.total - plain.total, kl_per_dim)
    # d(2·|mean_b Σ_d kl − C|)/d kl_bd = 2·sign/B for every entry
    assert extra.flatten().tolist() == pytest.approx([sign] * 4)
    assert pinned.as_floats().keys() == plain.as_floats().keys()
    with pytest.raises(ValueError, match="penalty must be >= 0, got -1.0"):
        loss_terms(NLL, SURPRISAL, MASK, kl_per_dim=kl_per_dim, penalty=-1.0, **kwargs)
