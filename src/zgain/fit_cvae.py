"""Training one CVAE variant: the SPEC §4 objective on an entangled-initialized decoder."""

from __future__ import annotations

from dataclasses import asdict, dataclass

import torch
from torch import Tensor
from tqdm import tqdm

from zgain.metrics import active_units
from zgain.models import CVAE, autocast_context, reparameterize
from zgain.objectives import LossTerms, beta_at, bow_loss, kl_diag_gaussians, loss_terms, token_nll
from zgain.params import CommonCVAEParams, VariantParams
from zgain.sequences import SeqBatch, target_frame
from zgain.tracking import LogFn
from zgain.training import check_finite, minibatches, select

MONITOR_EXAMPLES = 512  # validation examples whose posterior means give the active-unit count


@dataclass(frozen=True)
class Objective:
    """Everything the loss needs besides the batch: the variant's λ, β and the normalizer."""

    common: CommonCVAEParams
    variant: VariantParams
    normalizer: float  # N = E[b] over the train split

    @property
    def beta(self) -> float:
        return self.common.beta if self.variant.beta is None else self.variant.beta

    @property
    def free_bits(self) -> float:
        return self.common.free_bits if self.variant.free_bits is None else self.variant.free_bits

    def beta_at(self, step: int) -> float:
        c = self.common
        return beta_at(
            step,
            schedule=c.beta_schedule,
            beta=self.beta,
            warmup_steps=c.warmup_steps,
            n_cycles=c.n_cycles,
            ramp_fraction=c.ramp_fraction,
            total_steps=c.steps,
        )


def batch_loss(
    model: CVAE,
    part: SeqBatch,
    surprisal: Tensor,
    objective: Objective,
    step: int,
    *,
    max_x_len: int,
    generator: torch.Generator | None,
) -> tuple[LossTerms, Tensor]:
    """The loss terms of one batch with z ~ q(z|x,y); also returns the KL per dimension (B, D)."""
    mu_q, logvar_q = model.posterior(part.encoder_input)
    mu_p, logvar_p = model.prior(part.prior_input)
    z = reparameterize(mu_q, logvar_q, generator)
    logits = target_frame(model.decode(part.decoder_input, z), max_x_len)  # (B, T, V)
    nll = token_nll(logits.float(), part.targets, part.mask)  # (B, T)
    kl_per_dim = kl_diag_gaussians(
        mu_q.float(), logvar_q.float(), mu_p.float(), logvar_p.float()
    )  # (B, D)
    common = objective.common
    bow = (
        bow_loss(model.bow_logits(z).float(), part.targets, part.mask)
        if common.bow_weight > 0
        else None
    )
    weights = {k: v for k, v in objective.variant.weights.items() if k != "unified"}
    terms = loss_terms(
        nll,
        surprisal,
        part.mask,
        weights=weights,
        normalizer=objective.normalizer,
        eps=common.eps,
        kl_per_dim=kl_per_dim,
        beta=objective.beta_at(step),
        free_bits=objective.free_bits,
        bow=bow,
        bow_weight=common.bow_weight,
        unified=asdict(objective.variant.unified),
        unified_weight=objective.variant.weights.get("unified", 0.0),
    )
    return terms, kl_per_dim


@torch.no_grad()
def posterior_usage(model: CVAE, batch: SeqBatch, device: torch.device) -> dict[str, float]:
    """Active units (Cov_x E_q[z] > 0.01) on a fixed validation batch."""
    was_training = model.training
    model.eval()
    mu, _ = model.posterior(batch.encoder_input.to(device))
    model.train(was_training)
    count, variance = active_units(mu.float().cpu().numpy().astype("float64"))
    return {
        "active_units": float(count),
        **{f"mu_var_{j}": float(v) for j, v in enumerate(variance)},
    }


def fit_cvae(
    model: CVAE,
    train: SeqBatch,
    surprisal: Tensor,
    monitor: SeqBatch,
    objective: Objective,
    *,
    seed: int,
    max_x_len: int,
    device: torch.device,
    log: LogFn,
) -> dict[str, float]:
    """Adam on the variant's loss for `common.steps` steps; returns the last logged values.

    surprisal (N, T) is the frozen base b_t of `train`, row-aligned. Any non-finite term stops
    training with `NonFiniteLossError` naming the step and the term.
    """
    common = objective.common
    model.to(device).train()
    surprisal = surprisal.to(device)
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.Adam(params, lr=common.lr)
    generator = torch.Generator().manual_seed(seed)
    noise = torch.Generator(device=device).manual_seed(seed)
    batches = minibatches(train.targets.shape[0], common.batch_size, generator)
    last: dict[str, float] = {}
    for step in tqdm(range(common.steps), desc="train_cvae", unit="step", mininterval=2.0):
        index = next(batches)
        part = select(train, index).to(device)
        with autocast_context(device):
            terms, kl_per_dim = batch_loss(
                model,
                part,
                surprisal[index.to(device)],
                objective,
                step,
                max_x_len=max_x_len,
                generator=noise,
            )
        values = terms.as_floats()
        check_finite(step, values)
        optimizer.zero_grad(set_to_none=True)
        terms.total.backward()
        optimizer.step()
        if (step + 1) % common.log_every == 0 or step + 1 == common.steps:
            kl_dims = kl_per_dim.detach().mean(dim=0).tolist()
            last = {
                **values,
                **{f"kl_dim_{j}": v for j, v in enumerate(kl_dims)},
                **posterior_usage(model, monitor, device),
            }
            log(step + 1, last)
    model.eval()
    return last
