"""Training one CVAE variant: its objective on an entangled-initialized decoder.

docs/method.md#the-cvae and docs/method.md#the-loss-and-kl-schedules.
"""

from __future__ import annotations

import torch
from torch import Tensor
from tqdm import tqdm

from zgain.core.environment import autocast_context, check_finite
from zgain.core.nll import token_nll
from zgain.core.schedules import lr_at
from zgain.core.sequences import SeqBatch, minibatches, select, target_frame
from zgain.core.tracking import LogFn
from zgain.cvae.diagnostics import posterior_usage, validation_decomposition
from zgain.cvae.model import CVAE, kl_diag_gaussians, reparameterize
from zgain.cvae.objective import LossTerms, Objective, bow_loss


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
    bow = (
        bow_loss(model.bow_logits(z).float(), part.targets, part.mask)
        if objective.common.bow_weight > 0
        else None
    )
    terms = objective.loss(nll, surprisal, part.mask, kl_per_dim, step, bow)
    return terms, kl_per_dim


def param_groups(model: CVAE, lr: float, decoder_lr: float) -> list[dict]:
    """Adam groups: the decoder copy at decoder_lr, everything else (encoders, z-injection, BoW
    head) at lr; frozen parameters are left out, and so is a group with nothing to train."""
    decoder = [p for p in model.decoder.parameters() if p.requires_grad]
    others = [
        p
        for name, p in model.named_parameters()
        if p.requires_grad and not name.startswith("decoder.")
    ]
    groups = [
        {"params": others, "lr": lr, "peak_lr": lr},
        {"params": decoder, "lr": decoder_lr, "peak_lr": decoder_lr},
    ]
    return [group for group in groups if group["params"]]


def fit_cvae(
    model: CVAE,
    train: SeqBatch,
    surprisal: Tensor,
    monitor: SeqBatch,
    monitor_base_nll: Tensor,
    objective: Objective,
    *,
    seed: int,
    max_x_len: int,
    device: torch.device,
    log: LogFn,
) -> dict[str, float]:
    """Adam on the variant's loss for `common.steps` steps; returns the last logged values.

    surprisal (N, T) is the frozen base b_t of `train`, row-aligned; monitor is a validation
    batch and monitor_base_nll (N,) its base code lengths B. Both learning rates warm up
    linearly and decay on a cosine (docs/method.md#the-cvae). Every `val_every` steps the
    validation decomposition is logged (val_marginal_gain, val_z_information, …). Any
    non-finite term stops training with `NonFiniteLossError` naming the step and the term.
    """
    common = objective.common
    model.to(device).train()
    surprisal = surprisal.to(device)
    optimizer = torch.optim.Adam(param_groups(model, common.lr, common.decoder_lr))
    generator = torch.Generator().manual_seed(seed)
    noise = torch.Generator(device=device).manual_seed(seed)
    batches = minibatches(train.targets.shape[0], common.batch_size, generator)
    last: dict[str, float] = {}
    validation: dict[str, float] = {}
    for step in tqdm(range(common.steps), desc="train_cvae", unit="step", mininterval=2.0):
        for group in optimizer.param_groups:
            group["lr"] = lr_at(
                step,
                peak=group["peak_lr"],
                warmup_steps=common.lr_warmup_steps,
                total_steps=common.steps,
                min_ratio=common.min_lr_ratio,
            )
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
        objective.schedule.observe(step, values["kl"])
        optimizer.zero_grad(set_to_none=True)
        terms.total.backward()
        optimizer.step()
        done = step + 1 == common.steps
        if (step + 1) % common.val_every == 0 or done:
            validation = validation_decomposition(
                model,
                monitor,
                monitor_base_nll,
                n_samples=common.val_iw_samples,
                max_x_len=max_x_len,
                device=device,
                seed=seed,
            )
        if (step + 1) % common.log_every == 0 or done:
            kl_dims = kl_per_dim.detach().mean(dim=0).tolist()
            last = {
                **values,
                **{f"kl_dim_{j}": v for j, v in enumerate(kl_dims)},
                **posterior_usage(model, monitor, device),
                **validation,
                **objective.schedule.state(),
                "lr": optimizer.param_groups[0]["lr"],
            }
            log(step + 1, last)
    model.eval()
    return last
