"""Evaluation benchmark (issue item 3): examples/s at K = 256 importance samples, decoder
batched over the samples (the project's `evaluate_examples`) vs a loop over the samples; and the
share of a default run's wall time spent in evaluation, from unit costs measured here.

    python -m bench.bench_evaluate
"""

from __future__ import annotations

from dataclasses import dataclass
from unittest import mock

import numpy as np
import torch

from bench.common import Row, Section, Workload, interleaved, median, run_alone
from zgain.base.model import BaseLM
from zgain.core.nll import token_nll
from zgain.core.sequences import minibatches, select, target_frame
from zgain.cvae import marginal
from zgain.cvae.model import CVAE
from zgain.evaluate.scoring import PerExample, evaluate_examples
from zgain.world.splits import sample_table
from zgain.world.synthetic import sample

CPU = torch.device("cpu")
BATCHED_TOKEN_LOGP = marginal.token_logp


@dataclass
class Sizes:
    n_examples: int = 64  # test examples scored per timed evaluation
    iw_samples: int = 256
    repeats: int = 3
    unit_examples: int = 64  # examples per unit-cost measurement (share of the run)
    unit_steps: int = 10


def looped_token_logp(model: CVAE, part, z: torch.Tensor, max_x_len: int) -> torch.Tensor:
    """token_logp one latent sample at a time: K decoder passes of B sequences each."""
    return torch.cat(
        [BATCHED_TOKEN_LOGP(model, part, z[:, k : k + 1], max_x_len) for k in range(z.shape[1])],
        dim=1,
    )


def scoring_model(work: Workload, seed: int = 0) -> CVAE:
    """A CVAE whose decoder reads z (a small random z-injection instead of the zero start)."""
    model = work.cvae()
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        weight = model.z_injection.weight
        weight.copy_(0.1 * torch.randn(weight.shape, generator=generator))
    return model.eval()


def evaluate(work: Workload, model: CVAE, n: int, k: int, looped: bool = False) -> PerExample:
    batch = select(work.batch, slice(0, n))
    settings = work.params.evaluate
    kwargs = dict(
        iw_samples=k, batch_size=settings.batch_size, max_x_len=work.max_x_len, device=CPU, seed=0
    )
    if not looped:
        return evaluate_examples(model, batch, **kwargs)
    with mock.patch.object(marginal, "token_logp", looped_token_logp):
        return evaluate_examples(model, batch, **kwargs)


def batched_vs_looped(work: Workload, sizes: Sizes) -> dict[str, float]:
    model = scoring_model(work)
    n, k = sizes.n_examples, sizes.iw_samples
    batched = evaluate(work, model, n, k)
    looped = evaluate(work, model, n, k, looped=True)
    difference = float(np.abs(batched.nll_marginal - looped.nll_marginal).max())
    largest = float(np.abs(batched.nll_marginal).max())
    times = interleaved(
        {
            "batched": lambda: evaluate(work, model, n, k),
            "looped": lambda: evaluate(work, model, n, k, looped=True),
        },
        sizes.repeats,
        warmup=0,
    )
    return {name: median(t) for name, t in times.items()} | {
        "max_abs_diff": difference,
        "max_abs_nll": largest,
        "tokens": float(work.batch.targets.shape[1]),
    }


def base_steps(work: Workload, steps: int) -> None:
    """Forward + backward + Adam of the base LM at its batch size (train_base's step)."""
    model = BaseLM(work.params.base.model, work.world.vocab, work.world.max_len).train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=work.params.base.lr)
    batches = minibatches(
        work.batch.targets.shape[0], work.params.base.batch_size, torch.Generator().manual_seed(0)
    )
    for _ in range(steps):
        part = select(work.batch, next(batches))
        logits = target_frame(model(part.decoder_input), work.max_x_len)
        loss = token_nll(logits, part.targets, part.mask).sum() / part.mask.sum()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()


def surprisal_pass(work: Workload, n: int) -> None:
    from zgain.base.surprisal import score_tokens

    score_tokens(
        work.base,
        select(work.batch, slice(0, n)),
        max_x_len=work.max_x_len,
        batch_size=work.params.surprisal.batch_size,
        device=CPU,
    )


def generation(work: Workload, n: int) -> None:
    sample_table(sample(work.world, n, np.random.default_rng(0)), "train", 0)


def run_shares(work: Workload, sizes: Sizes, train_step_seconds: float) -> dict[str, float]:
    """Seconds of each part of a default run, from unit costs measured side by side.

    train_step_seconds is a train_cvae step with its monitoring (bench_train's trainer figure).
    The base trains for at most max_steps (early stopping may end it sooner: an upper bound).
    """
    p = work.params
    model = scoring_model(work)
    m, steps = sizes.unit_examples, sizes.unit_steps
    unit = {
        name: median(t)
        for name, t in interleaved(
            {
                "evaluate": lambda: evaluate(work, model, m, p.evaluate.iw_samples),
                "base": lambda: base_steps(work, steps),
                "surprisal": lambda: surprisal_pass(work, 8 * m),
                "generate": lambda: generation(work, 8 * m),
            },
            sizes.repeats,
        ).items()
    }
    runs = len(p.cvae.variants) * len(p.cvae.rates) * len(p.cvae.seeds)
    total_examples = sum(p.data.sizes().values())
    return {
        "generate": unit["generate"] / (8 * m) * total_examples,
        "train_base": unit["base"] / steps * p.base.max_steps,
        "surprisal": unit["surprisal"] / (8 * m) * total_examples,
        "train_cvae": train_step_seconds * p.cvae.common.steps * runs,
        "evaluate": unit["evaluate"] / m * p.data.n_test * runs,
    }


def measure(work: Workload, sizes: Sizes, train_step_seconds: float) -> tuple[Section, dict]:
    bl = batched_vs_looped(work, sizes)
    n, k = sizes.n_examples, sizes.iw_samples
    speed = bl["looped"] / bl["batched"]
    shares = run_shares(work, sizes, train_step_seconds)
    total = sum(shares.values())
    share = shares["evaluate"] / total
    parts = ", ".join(f"{name} {seconds / 60:.1f}" for name, seconds in shares.items())
    section = Section(
        f"3. Evaluation at K = {k} (batch {work.params.evaluate.batch_size} examples)",
        [
            Row("examples/s, batched over samples", f"{n / bl['batched']:.1f}"),
            Row("examples/s, one sample per decoder pass", f"{n / bl['looped']:.1f}"),
            Row("speed-up of batching", f"{speed:.2f}×", "> 1", speed > 1),
            Row("max abs ΔM, batched vs looped (nats)", f"{bl['max_abs_diff']:.1e}"),
            Row("share of a default run's wall time in evaluation (estimate)", f"{share:.0%}"),
        ],
        [
            f"Median of {sizes.repeats} interleaved evaluations of {n} examples. The share "
            f"comes from unit costs measured side by side and scaled to the default run "
            f"(minutes: {parts}; train_base at its max_steps, an upper bound)."
        ],
    )
    return section, {**bl, "speed": speed, "share": share, **shares}


def sections() -> list[Section]:
    from bench.bench_train import Sizes as TrainSizes
    from bench.bench_train import trainer_vs_bare
    from bench.common import params_with, raw_params, workload

    work = workload(params_with(raw_params()), 20_000)
    step = trainer_vs_bare(work, TrainSizes(trainer_repeats=1))["trainer"]
    return [measure(work, Sizes(), step)[0]]


if __name__ == "__main__":
    run_alone(__doc__, sections)
