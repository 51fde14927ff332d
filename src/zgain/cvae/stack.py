"""Many runs as one model: trainable weights with a leading member axis
(docs/performance.md#the-member-axis).

The runs of a group share their batches, their model's architecture and, being one group, one
seed: stacked, every trainable tensor of shape S becomes one of shape (M, *S), one forward
(`torch.func.vmap` of `torch.func.functional_call`) computes all M members' per-token NLL and KL
from the shared frozen reader's pass, and one Adam step updates the stacked tensors. Adam and
the weight average are elementwise, so a member's update is its solo update; its loss, β
schedule, latent noise and penalty stay its own (`zgain.cvae.fit.RunState`). What differs from a
solo run is float rounding in the batched matmuls (tests/cvae/test_stack.py).

A stack holds runs of one model config without aggressive encoder steps or dropout (`refusal`
says which it cannot hold, and why). With `compiled`, its forward (and so its backward, through
AOTAutograd) runs under `torch.compile` (inductor, static shapes: one compile per process and
member count); the loss, Adam and the average stay eager.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING

import torch
from torch import Tensor, nn
from torch.func import functional_call, vmap

from zgain.core.environment import autocast_context
from zgain.core.nll import token_nll
from zgain.core.sequences import SeqBatch
from zgain.cvae.gaussian import kl_divergence, shift_scale
from zgain.cvae.model import CVAE

if TYPE_CHECKING:
    from zgain.cvae.member import Monitor, ReaderFeatures, RunState


def refusal(models: Sequence[CVAE], aggressive: Sequence[bool]) -> str | None:
    """Why these runs cannot share a stack, or None when they can."""
    if len({model.cfg for model in models}) > 1:
        return "the runs' cvae models differ (one stack holds one architecture)"
    if any(aggressive):
        return "a run takes aggressive encoder steps (an update of one member alone)"
    if models[0].decoder.config.dropout:
        return "dropout > 0 (a member's dropout masks would not be its solo run's)"
    return None


class _Outputs(nn.Module):
    """What one member's loss needs from its model on a batch, as one `forward` for vmap."""

    def __init__(self, model: CVAE) -> None:
        super().__init__()
        self.cvae = model

    def forward(
        self,
        eps: Tensor,
        part: SeqBatch,
        posterior_features: Tensor | None,
        prior_features: Tensor | None,
        max_x_len: int,
        with_bow: bool,
    ) -> tuple[Tensor, Tensor, Tensor]:
        """eps (B, 1, Dz) -> nll (B, T), kl_per_dim (B, Dz), bow logits (B, V_content) or an
        empty (B, 0) when no member weights the BoW loss; as `zgain.cvae.fit.batch_loss`."""
        model = self.cvae
        mu_q, logvar_q = model.posterior(part.encoder_input, posterior_features)
        mu_p, logvar_p = model.prior(part.prior_input, prior_features)
        z = shift_scale(mu_q, logvar_q, eps)[:, 0]
        logits = model.decode(part.decoder_input, z, first=max_x_len)  # (B, T, V)
        nll = token_nll(logits.float(), part.targets, part.mask)
        kl = kl_divergence(mu_q.float(), logvar_q.float(), mu_p.float(), logvar_p.float())
        bow = model.bow_logits(z).float() if with_bow else z.new_zeros(z.shape[0], 0)
        return nll, kl, bow


class Stack:
    """The trainable weights of M same-architecture CVAEs stacked on a leading member axis,
    their Adam and (with `decay`) their exponential moving average."""

    def __init__(
        self,
        models: Sequence[CVAE],
        lr: float,
        decoder_lr: float,
        decay: float,
        fused: bool,
        *,
        compiled: bool = False,
    ) -> None:
        self.template = _Outputs(copy.deepcopy(models[0]))
        for block in self.template.cvae.modules():
            if hasattr(block, "explicit_attention"):
                block.explicit_attention = True  # vmap has no batching rule for CPU SDPA
        names = [n for n, p in self.template.named_parameters() if p.requires_grad]
        members = [dict(_Outputs(model).named_parameters()) for model in models]
        self.weights = {
            n: torch.stack([m[n].detach() for m in members]).requires_grad_() for n in names
        }
        decoder = [p for n, p in self.weights.items() if n.startswith("cvae.decoder.")]
        others = [p for n, p in self.weights.items() if not n.startswith("cvae.decoder.")]
        groups = [
            {"params": others, "lr": lr, "peak_lr": lr},
            {"params": decoder, "lr": decoder_lr, "peak_lr": decoder_lr},
        ]
        self.optimizer = torch.optim.Adam([g for g in groups if g["params"]], fused=fused)
        self.decay = decay
        self.average: dict[str, Tensor] | None = None  # set by the first update, as AveragedModel
        self.size = len(models)
        self.forward = compiled_outputs() if compiled else Stack.outputs

    def outputs(
        self,
        eps: Tensor,
        part: SeqBatch,
        features: tuple[Tensor | None, Tensor | None],
        max_x_len: int,
        with_bow: bool,
    ) -> tuple[Tensor, Tensor, Tensor]:
        """eps (M, B, 1, Dz) -> nll (M, B, T), kl_per_dim (M, B, Dz), bow logits (M, B, ·);
        `train_step` calls it through `forward`, which is this method or its compiled form."""

        def member(weights: dict[str, Tensor], noise: Tensor) -> tuple[Tensor, Tensor, Tensor]:
            forward = partial(
                functional_call, self.template, weights, strict=False, tie_weights=False
            )
            return forward((noise, part, *features, max_x_len, with_bow))

        return vmap(member)(self.weights, eps)

    def step(self) -> None:
        """One Adam step on every member, then the moving average's update (a copy at the
        first, then lerp toward the weights by 1 − decay, as torch's EMA average)."""
        self.optimizer.step()
        if not self.decay:
            return
        with torch.no_grad():
            if self.average is None:
                self.average = {n: w.detach().clone() for n, w in self.weights.items()}
            else:
                names = list(self.weights)
                torch._foreach_lerp_(
                    [self.average[n] for n in names],
                    [self.weights[n].detach() for n in names],
                    1 - self.decay,
                )

    @torch.no_grad()
    def load_member(self, index: int, model: CVAE, averaged: bool) -> None:
        """Copy member `index`'s weights (the moving average's with `averaged`, once it has
        one) into `model`, a CVAE of the stack's architecture."""
        source = self.average if averaged and self.average is not None else self.weights
        params = dict(_Outputs(model).named_parameters())
        for name, stacked in source.items():
            params[name].copy_(stacked[index])

    def train_step(
        self,
        states: Sequence[RunState],
        step: int,
        part: SeqBatch,
        surprisal: Tensor,
        features: ReaderFeatures,
        monitor: Monitor,
        when: dict[str, bool],
        lr: float,
    ) -> None:
        """One step of every member: one forward, one backward, one Adam step; `states[i]` is
        member i's run, `when` says whether to check, validate and log, lr the first group's."""
        latent = states[0].model.cfg.latent_dim
        shape = (part.targets.shape[0], 1, latent)
        eps = torch.stack(
            [
                torch.randn(shape, generator=s.noise, device=s.device, dtype=torch.float32)
                for s in states
            ]
        )  # (M, B, 1, Dz): each member's own draws, as its solo run's
        with_bow = any(state.objective.variant.bow_weight > 0 for state in states)
        with autocast_context(monitor.device):
            nll, kl, bow = self.forward(
                self, eps, part, (features.posterior, features.prior), monitor.max_x_len, with_bow
            )
            terms = [
                state.loss(step, nll[i], part, surprisal, kl[i], bow[i])
                for i, state in enumerate(states)
            ]
        for state, member_terms in zip(states, terms, strict=True):
            state.account(step, member_terms, when["check"])
        self.optimizer.zero_grad(set_to_none=True)
        torch.stack([t.total for t in terms]).sum().backward()
        self.step()
        if not (when["validate"] or when["log"]):
            return
        for i, state in enumerate(states):
            self.load_member(i, state.model, averaged=True)
            state.record(
                step,
                terms[i],
                kl[i],
                state.model,
                lr,
                monitor,
                validate=when["validate"],
                log=when["log"],
            )


@functools.cache
def compiled_outputs() -> Callable[..., tuple[Tensor, Tensor, Tensor]]:
    """`Stack.outputs` under torch.compile, made once a process: dynamo guards on the inputs'
    shapes, so every stack of one member count and batch reuses one compiled graph."""
    return torch.compile(Stack.outputs, dynamic=False)
