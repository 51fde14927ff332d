"""The study bench's lever rows for one train step: each way to take a step (members, the
reader pass, threads, the memory attention's form, the decoder's last block, Adam's kernel)
timed in this process, their blocks interleaved, and the step's FLOPs beside the machine's
large-matmul peak (docs/performance.md#the-study-engine-runs-per-hour)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from unittest import mock

import torch
from torch.utils.flop_counter import FlopCounterMode

from bench.earlier_forms import (
    LIBRARY_ATTEND,
    LIBRARY_DECODE,
    separate_reader_passes,
    torch_softmax_attend,
    two_fused_calls,
    whole_pass_decode,
)
from bench.timing import interleaved, median
from bench.workload import params_with, workload
from zgain.base.model import Memory
from zgain.core.sequences import minibatches, select
from zgain.cvae.fit import ReaderFeatures, batch_loss, param_groups
from zgain.cvae.model import CVAE

PEAK_SIZE = 2048
"""Side of the square fp32 matmul whose speed stands for the machine's peak."""


@dataclass(frozen=True)
class Lever:
    """One way to take a train step: `members` runs in this process (sharing one reader pass
    or not), the reader once for both encoders (`prefix`) or twice, on every thread or one,
    with another memory attention (`attend`), the decoder's last block on every position
    (`whole_pass`) or Adam's per-tensor loop (`fused=False`)."""

    members: int = 1
    shared_reader: bool = False
    prefix: bool = True
    one_thread: bool = False
    attend: Callable | None = None
    whole_pass: bool = False
    fused: bool = True


LEVERS = {
    "solo, every thread": Lever(),
    "solo, every thread, separate reader passes": Lever(prefix=False),
    "solo, one thread": Lever(one_thread=True),
    "2 in lockstep, one thread, shared reader": Lever(2, shared_reader=True, one_thread=True),
    "solo, every thread, memory attention as two fused calls": Lever(attend=two_fused_calls),
    "solo, every thread, memory attention with torch's softmax": Lever(attend=torch_softmax_attend),
    "solo, every thread, the decoder's last block on every position": Lever(whole_pass=True),
    "solo, every thread, Adam's per-tensor loop": Lever(fused=False),
    "solo, one thread, Adam's per-tensor loop": Lever(fused=False, one_thread=True),
}
"""The lever rows; the first is the reference the others are divided by."""


def step_levers(
    raw: dict, threads: int, block_steps: int = 10, blocks: int = 5
) -> dict[str, float]:
    """Milliseconds per run-step of each lever, and the step's FLOPs and the machine's peak.

    Each lever keeps its runs, optimizers and batches across blocks of `block_steps` steps;
    the levers' blocks are interleaved (one untimed first), median of `blocks`."""
    params = params_with(raw)
    work = workload(params, 4096)
    objective = work.objective()
    surprisal = work.surprisal
    batch_size = params.cvae.common.batch_size

    def member(fused: bool):
        torch.manual_seed(0)
        model = work.cvae().train()
        optimizer = torch.optim.Adam(param_groups(model, 1e-3, 1e-4), fused=fused)
        return model, optimizer, torch.Generator().manual_seed(0)

    def stepper(lever: Lever) -> Callable[[], None]:
        models = [member(lever.fused) for _ in range(lever.members)]
        batches = minibatches(work.batch.targets.shape[0], batch_size, torch.Generator())

        def step() -> None:
            index = next(batches)
            part = select(work.batch, index)
            shared = ReaderFeatures.of(models[0][0], part) if lever.shared_reader else None
            for model, optimizer, noise in models:
                features = shared
                if features is None:
                    reader = ReaderFeatures.of if lever.prefix else separate_reader_passes
                    features = reader(model, part)
                terms, _ = batch_loss(
                    model, part, surprisal[index], objective, 0.1,
                    max_x_len=work.max_x_len, generator=noise, features=features,
                )  # fmt: skip
                optimizer.zero_grad(set_to_none=True)
                terms.total.backward()
                optimizer.step()

        def block() -> None:
            torch.set_num_threads(1 if lever.one_thread else threads)
            attend = LIBRARY_ATTEND if lever.attend is None else lever.attend
            decode = whole_pass_decode if lever.whole_pass else LIBRARY_DECODE
            with (
                mock.patch.object(Memory, "attend", attend),
                mock.patch.object(CVAE, "decode", decode),
            ):
                for _ in range(block_steps):
                    step()

        return block

    times = interleaved({name: stepper(lever) for name, lever in LEVERS.items()}, blocks)
    out = {
        name: 1e3 * median(times[name]) / (block_steps * lever.members)
        for name, lever in LEVERS.items()
    }
    torch.set_num_threads(threads)
    model, _, noise = member(True)
    part = select(work.batch, torch.arange(batch_size))
    with FlopCounterMode(display=False) as counter:
        terms, _ = batch_loss(
            model, part, surprisal[:batch_size], objective, 0.1,
            max_x_len=work.max_x_len, generator=noise,
        )  # fmt: skip
        terms.total.backward()
    out["flops"] = float(counter.get_total_flops())
    a = torch.randn(PEAK_SIZE, PEAK_SIZE)
    a @ a
    start = time.perf_counter()
    for _ in range(5):
        a @ a
    out["peak_flops"] = 5 * 2 * PEAK_SIZE**3 / (time.perf_counter() - start)
    return out
