"""Training-step benchmarks: precomputed surprisal vs an on-the-fly frozen base (issue item 1),
and the project's trainer vs a bare hand-written loop (item 2). Variant token_share_cc.

    python -m bench.bench_train
"""

from __future__ import annotations

import copy
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

import torch
from torch import Tensor

from bench.common import (
    VARIANT,
    Row,
    Section,
    Workload,
    interleaved,
    median,
    params_with,
    raw_params,
    run_alone,
    workload,
)
from zgain.core.nll import token_nll
from zgain.core.sequences import minibatches, select, target_frame
from zgain.core.tracking import live_run
from zgain.cvae.fit import fit_cvae
from zgain.cvae.gaussian import kl_divergence, reparameterize
from zgain.cvae.member import batch_loss
from zgain.cvae.model import CVAE

CPU = torch.device("cpu")


@dataclass
class Sizes:
    n_examples: int = 20_000  # rows of the surprisal table the batches are drawn from
    steps: int = 25  # training steps per timed block (item 1)
    repeats: int = 7
    trainer_repeats: int = 5  # item 2 blocks are `val_every` steps long


def index_batches(n: int, batch_size: int, count: int, seed: int = 0) -> list[Tensor]:
    batches = minibatches(n, batch_size, torch.Generator().manual_seed(seed))
    return [next(batches) for _ in range(count)]


@torch.no_grad()
def base_surprisal(base: torch.nn.Module, part, max_x_len: int) -> Tensor:
    """b_t of one batch from the frozen base, as the surprisal stage computes it."""
    logits = target_frame(base(part.decoder_input), max_x_len)
    return token_nll(logits.float(), part.targets, part.mask)


class StepLoop:
    """The CVAE optimisation step of `fit_cvae` (batch_loss, backward, Adam) on fixed batches."""

    def __init__(
        self, work: Workload, batches: list[Tensor], online: bool, fixed: bool = False
    ) -> None:
        self.work, self.batches, self.online, self.fixed = work, batches, online, fixed
        self.model = work.cvae().train()
        self.base = copy.deepcopy(work.base).eval().requires_grad_(False)
        self.objective = work.objective()
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=1e-4)
        self.noise = torch.Generator().manual_seed(0)

    def __call__(self) -> None:
        work = self.work
        for step, index in enumerate(self.batches):
            part = select(work.batch, index)
            if self.online:
                surprisal = base_surprisal(self.base, part, work.max_x_len)
            elif self.fixed:  # no read at all: one tensor of the right shape for every step
                surprisal = work.surprisal[: len(index)]
            else:
                surprisal = work.surprisal[index]
            terms, _ = batch_loss(
                self.model,
                part,
                surprisal,
                self.objective,
                step,
                max_x_len=work.max_x_len,
                generator=self.noise,
            )
            self.optimizer.zero_grad(set_to_none=True)
            terms.total.backward()
            self.optimizer.step()


def base_forwards(work: Workload, batches: list[Tensor]) -> None:
    base = work.base.eval()
    for index in batches:
        base_surprisal(base, select(work.batch, index), work.max_x_len)


def precomputed_vs_online(work: Workload, sizes: Sizes) -> dict[str, float]:
    """Median seconds per block of `steps` steps: table, on the fly, the base forward alone, and
    a step that reads no table (one fixed surprisal tensor)."""
    common = work.params.cvae.common
    batches = index_batches(work.batch.targets.shape[0], common.batch_size, sizes.steps)
    times = interleaved(
        {
            "table": StepLoop(work, batches, online=False),
            "online": StepLoop(work, batches, online=True),
            "base": lambda: base_forwards(work, batches),
            "fixed": StepLoop(work, batches, online=False, fixed=True),
        },
        sizes.repeats,
    )
    return {name: median(t) for name, t in times.items()}


def cc_recon(nll: Tensor, b: Tensor, mask: Tensor, normalizer: float, eps: float) -> Tensor:
    """R_cc = mean_i c_i Σ_t w_t ℓ_t / N, w_t = b_t / (B_i + ε), c_i = b̄_i / (Σ_t w_t b_t + ε)."""
    b = torch.where(mask, b, 0.0)
    w = b / (b.sum(dim=1, keepdim=True) + eps)
    c = (b.sum(dim=1) / mask.sum(dim=1)) / ((w * b).sum(dim=1) + eps)
    return (c * (w * torch.where(mask, nll, 0.0)).sum(dim=1)).mean() / normalizer


def bare_loop(work: Workload, model: CVAE, steps: int, seed: int = 0) -> Tensor:
    """Adam on the cc loss + β·KL, constant rates, nothing logged; returns the last loss."""
    common = work.params.cvae.common
    variant = work.params.cvae.variant(VARIANT)
    objective = work.objective()
    model.train()
    optimizer = torch.optim.Adam(model.parameters(), lr=common.lr)
    noise = torch.Generator().manual_seed(seed)
    batches = minibatches(work.batch.targets.shape[0], common.batch_size, noise)
    x_len = work.max_x_len
    for _ in range(steps):
        index = next(batches)
        part = select(work.batch, index)
        mu_q, logvar_q = model.posterior(part.encoder_input)
        mu_p, logvar_p = model.prior(part.prior_input)
        z = reparameterize(mu_q, logvar_q, noise)
        logits = target_frame(model.decode(part.decoder_input, z), x_len)
        nll = token_nll(logits, part.targets, part.mask)
        recon = cc_recon(nll, work.surprisal[index], part.mask, objective.normalizer, common.eps)
        kl = kl_divergence(mu_q, logvar_q, mu_p, logvar_p).mean(dim=0).sum()
        loss = recon + variant.beta * kl
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    return loss.detach()


def trainer(work: Workload, model: CVAE, steps: int, live_dir: Path, seed: int = 0) -> dict:
    """`fit_cvae` as the train_cvae stage calls it (dvclive logging, validation, checks)."""
    common = work.params.cvae.common.model_copy(update={"steps": steps})
    objective = work.objective()
    objective = replace(objective, common=common)
    monitor_rows = slice(0, common.val_examples)
    monitor = select(work.batch, monitor_rows)
    monitor_base = work.surprisal[monitor_rows].double().sum(dim=1)
    with live_run(live_dir) as (_, log):
        return fit_cvae(
            model,
            work.batch,
            work.surprisal,
            monitor,
            monitor_base,
            objective,
            seed=seed,
            max_x_len=work.max_x_len,
            device=CPU,
            log=log,
        )


def trainer_vs_bare(work: Workload, sizes: Sizes) -> dict[str, float]:
    """Median seconds per step over blocks of `val_every` steps (one validation period) in each
    loop, and `speed`: the median over repeats of bare ÷ trainer time, each repeat's two blocks
    run back to back, so that a machine whose speed drifts between repeats cancels out."""
    steps = work.params.cvae.common.val_every
    fresh = work.cvae()
    with tempfile.TemporaryDirectory() as tmp:
        times = interleaved(
            {
                "trainer": lambda: trainer(work, copy.deepcopy(fresh), steps, Path(tmp) / "live"),
                "bare": lambda: bare_loop(work, copy.deepcopy(fresh), steps),
            },
            sizes.trainer_repeats,
        )
    speed = median([b / t for b, t in zip(times["bare"], times["trainer"], strict=True)])
    return {name: median(t) / steps for name, t in times.items()} | {
        "steps": steps,
        "speed": speed,
    }


def study_forwards(work: Workload) -> tuple[float, float]:
    """Base forwards per train example over the study: precomputed vs on the fly."""
    cvae, data = work.params.cvae, work.params.data
    runs = len(cvae.variants) * len(cvae.rates) * len(cvae.seeds)
    epochs = cvae.common.steps * cvae.common.batch_size / data.n_train
    return 1.0, runs * epochs


def measure(work: Workload, sizes: Sizes) -> tuple[Section, Section, dict[str, float]]:
    pre = precomputed_vs_online(work, sizes)
    ratio = pre["online"] / pre["table"]  # steps/s with the table over steps/s on the fly
    bound = (pre["table"] + pre["base"]) / pre["table"]
    batch = work.params.cvae.common.batch_size
    once, online = study_forwards(work)
    first = Section(
        f"1. Precomputed surprisal vs an on-the-fly frozen base ({VARIANT}, batch {batch})",
        [
            Row("steps/s, table", f"{sizes.steps / pre['table']:.1f}"),
            Row("steps/s, base forward in the step", f"{sizes.steps / pre['online']:.1f}"),
            Row("speed-up (table / on the fly)", f"{ratio:.3f}×"),
            Row("bound (CVAE step + base forward) / CVAE step", f"{bound:.3f}×"),
            Row(
                "speed-up / bound",
                f"{ratio / bound:.3f}",
                "≥ 0.95",
                ratio / bound >= 0.95,
            ),
            Row(
                "table step ÷ step reading no table",
                f"{pre['table'] / pre['fixed']:.3f}",
                "≤ 1.05",
                pre["table"] / pre["fixed"] <= 1.05,
            ),
            Row(
                "base forwards per train example over the study",
                f"precomputed {once:g} vs on the fly {online:.2f}",
            ),
        ],
        [
            f"Median of {sizes.repeats} interleaved blocks of {sizes.steps} steps each; the "
            "on-the-fly forward runs under no_grad in eval mode, as the surprisal stage does. "
            "On the fly = runs (variants × rates × seeds) × epochs (steps × batch / n_train); the "
            "precomputed table also costs one forward per val/test example, once."
        ],
    )
    tb = trainer_vs_bare(work, sizes)
    speed = tb["speed"]  # trainer steps/s as a share of the bare loop's
    second = Section(
        f"2. Trainer overhead ({VARIANT}, batch {batch})",
        [
            Row("ms/step, train_cvae loop (fit_cvae)", f"{1e3 * tb['trainer']:.2f}"),
            Row("ms/step, bare hand-written loop", f"{1e3 * tb['bare']:.2f}"),
            Row("trainer steps/s ÷ bare steps/s", f"{speed:.3f}", "≥ 0.95", speed >= 0.95),
        ],
        [
            f"{sizes.trainer_repeats} interleaved pairs of blocks of {tb['steps']} steps (one "
            "validation period: dvclive logging, lr/β schedules, finiteness checks, posterior "
            "usage and the validation pass included in the trainer); ms/step are medians over "
            "the blocks, the ratio is the median of the pairs' ratios (each pair back to back)."
        ],
    )
    return first, second, {"ratio": ratio, "bound": bound, "speed": speed, **pre, **tb}


def sections() -> list[Section]:
    sizes = Sizes()
    work = workload(params_with(raw_params()), sizes.n_examples)
    return list(measure(work, sizes)[:2])


if __name__ == "__main__":
    run_alone(__doc__, sections)
