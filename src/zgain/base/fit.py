"""Training the z-free base model p_base(y | x) with early stopping on validation NLL."""

from __future__ import annotations

import copy
from dataclasses import dataclass

import torch
from tqdm import tqdm

from zgain.base.model import BaseLM
from zgain.base.surprisal import score_tokens
from zgain.core.environment import autocast_context, check_finite
from zgain.core.nll import token_nll
from zgain.core.schedules import lr_at
from zgain.core.sequences import SeqBatch, minibatches, select
from zgain.core.tracking import LogFn
from zgain.params import BaseParams

VALIDATION_BATCH = 1024
"""Examples per forward pass when scoring validation and test (speed only)."""


@dataclass(frozen=True)
class BaseFit:
    best_step: int  # step whose weights were kept
    best_val_nll: float  # mean validation NLL per sequence at best_step, nats
    steps: int  # optimizer steps actually taken
    stopped_early: bool


def validation_nll(
    model: BaseLM, batch: SeqBatch, *, max_x_len: int, batch_size: int, device: torch.device
) -> float:
    """Mean over examples of the sequence NLL Σ_t −log p(y_t | y_<t, x), nats."""
    scores = score_tokens(model, batch, max_x_len=max_x_len, batch_size=batch_size, device=device)
    return float(scores.double().sum(dim=1).mean())


def fit_base(
    model: BaseLM,
    train: SeqBatch,
    val: SeqBatch,
    params: BaseParams,
    *,
    seed: int,
    max_x_len: int,
    device: torch.device,
    log: LogFn,
) -> BaseFit:
    """AdamW with warm-up + cosine decay; keeps the weights of the best validation pass.

    The training loss is the token-sum NLL per sequence (mean over the batch), i.e. the
    sequence log-likelihood the oracle is stated in. Stops after `patience` validation passes
    without improvement; `log(step, metrics)` receives every validation pass. `seed` (the
    base's, one of base.seeds) orders the minibatches.
    """
    model.to(device).train()
    optimizer = torch.optim.AdamW(
        model.parameters(), lr=params.lr, weight_decay=params.weight_decay
    )
    generator = torch.Generator().manual_seed(seed)
    batches = minibatches(train.targets.shape[0], params.batch_size, generator)
    best = (float("inf"), 0, copy.deepcopy(model.state_dict()))
    passes_without_gain = 0
    step = 0
    progress = tqdm(range(params.max_steps), desc="train_base", unit="step", mininterval=2.0)
    for step in progress:
        lr = lr_at(
            step,
            peak=params.lr,
            warmup_steps=params.warmup_steps,
            total_steps=params.max_steps,
            min_ratio=params.min_lr_ratio,
        )
        for group in optimizer.param_groups:
            group["lr"] = lr
        part = select(train, next(batches)).to(device)
        with autocast_context(device):
            logits = model(part.decoder_input, first=max_x_len)  # (B, T, V)
        loss = token_nll(logits.float(), part.targets, part.mask).sum(dim=1).mean()
        check_finite(step, {"train_nll": float(loss.detach())})
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        if (step + 1) % params.eval_every == 0 or step + 1 == params.max_steps:
            val_nll = validation_nll(
                model, val, max_x_len=max_x_len, batch_size=VALIDATION_BATCH, device=device
            )
            log(step + 1, {"train_nll": float(loss.detach()), "val_nll": val_nll, "lr": lr})
            progress.set_postfix(val_nll=f"{val_nll:.4f}")
            if val_nll < best[0]:
                best = (val_nll, step + 1, copy.deepcopy(model.state_dict()))
                passes_without_gain = 0
            else:
                passes_without_gain += 1
                if passes_without_gain >= params.patience:
                    break
    model.load_state_dict(best[2])
    model.eval()
    steps = step + 1
    return BaseFit(
        best_step=best[1], best_val_nll=best[0], steps=steps, stopped_early=steps < params.max_steps
    )
