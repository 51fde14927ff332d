"""The inputs the benchmarks time: params (default or a profile), a sampled world, models.

Nothing here reads pipeline outputs: worlds are sampled, the base LM is freshly initialized
(costs do not depend on the weights) and its surprisal table is computed by the same
`score_tokens` the surprisal stage uses.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import torch
import yaml

from zgain.base.model import BaseLM, save_base
from zgain.base.normalizer import mean_surprisal
from zgain.base.surprisal import example_stats, score_tokens
from zgain.core.sequences import SeqBatch
from zgain.cvae.model import CVAE
from zgain.cvae.objective import Objective
from zgain.params import Params, load_params, parse_params
from zgain.params.profile import merge
from zgain.world.packed import pack_split
from zgain.world.synthetic import World, sample

REPO_ROOT = Path(__file__).resolve().parents[1]
VARIANT = "token_share_cc"
"""The variant every training benchmark runs (the one the design was chosen for)."""


def raw_params(profile: dict | None = None) -> dict:
    """params.yaml as plain Python, with a profile (e.g. the tiny test profile) merged in."""
    raw = yaml.safe_load((REPO_ROOT / "params.yaml").read_text())
    return merge(raw, profile) if profile else raw


UPSTREAM = ("synthetic_dir", "bases_dir", "base_live", "surprisal_dir", "normalizer_dir")
"""The path keys of a run's inputs from the stages before train_cvae (the roots of every base's
files: `paths.base(b)`)."""
RUN_OUTPUTS = ("cvae_dir", "cvae_live", "eval_dir", "reports_dir")


def screening_only(raw: dict) -> dict:
    """`raw` with one base, its first (the screening base), and so no confirming bases; the
    confirming tier's variants and rates cut to those `raw` lists (the first of each when none
    is left). The benchmarks train screening groups only, often on a grid cut to a rate or a
    variant, which the confirming tier must name (docs/architecture.md#bases)."""
    cvae = raw["cvae"]
    confirm = cvae["confirm"]
    variants = [v for v in confirm["variants"] if v in cvae["variants"]]
    rates = [r for r in confirm["rates"] if r in cvae["rates"]]
    tier = {
        "bases": [],
        "variants": variants or list(cvae["variants"])[:1],
        "rates": rates or list(cvae["rates"])[:1],
    }
    return merge(raw, {"base": {"seeds": raw["base"]["seeds"][:1]}, "cvae": {"confirm": tier}})


def on_completed_run(repo: Path, scratch: Path, cvae: dict) -> Params:
    """This checkout's params with `cvae` merged into its cvae block, reading the upstream
    outputs (world, screening base, its surprisal and normalizer) of the completed run in `repo`
    and writing the runs under `scratch`, never in `repo`."""
    raw = raw_params()
    for key in UPSTREAM:
        raw["paths"][key] = str(repo / raw["paths"][key])
    for key in RUN_OUTPUTS:
        raw["paths"][key] = str(scratch / key)
    raw["cvae"] = merge(raw["cvae"], cvae)
    return parse_params(screening_only(raw))


def group_args(root: Path) -> list[str]:
    """A group stage's options for the screening group (VARIANT, seed 0) of the project at
    root, whose params.yaml names its screening base."""
    base = load_params(root / "params.yaml").base.screening
    return ["--base", str(base), "--variant", VARIANT, "--seed", "0"]


def params_with(raw: dict, **overrides: dict) -> Params:
    """Validated params from `raw` with block overrides, e.g. params_with(raw, data={...}),
    on the screening base alone (`screening_only`)."""
    return parse_params(screening_only(merge(raw, overrides)))


@dataclass
class Workload:
    """A world, n packed examples, a fresh base LM and its surprisal of those examples."""

    params: Params
    world: World
    batch: SeqBatch
    base: BaseLM
    surprisal: torch.Tensor  # (N, T) float32, what the surprisal stage would have written

    @property
    def max_x_len(self) -> int:
        return self.world.max_x_len

    def cvae(self) -> CVAE:
        """A CVAE on a copy of the base, initialized as the train_cvae stage does."""
        return CVAE(self.base, self.params.cvae.common.model)

    def objective(self, variant: str = VARIANT) -> Objective:
        stats = example_stats(self.surprisal.numpy(), self.batch.mask.numpy())
        normalizer = mean_surprisal(pa.array(stats["surprisal_mean"]))
        cvae = self.params.cvae
        return Objective.on_split(
            cvae.common,
            cvae.variant(variant),
            normalizer,
            cvae.rates[0],
            self.surprisal,
            self.batch.mask,
        )


def workload(params: Params, n: int, seed: int = 0) -> Workload:
    """Sample n examples of params' world and score them with a fresh base LM."""
    world = World.from_params(params.data)
    drawn = sample(world, n, np.random.default_rng(seed))
    batch = pack_split(drawn, world)
    torch.manual_seed(seed)
    base = BaseLM(params.base.model, world.vocab, world.max_len)
    surprisal = score_tokens(
        base, batch, max_x_len=world.max_x_len, batch_size=512, device=torch.device("cpu")
    )
    return Workload(params, world, batch, base, surprisal)


def save_fresh_base(params: Params, path: Path, seed: int = 0) -> Path:
    """A freshly initialized base LM for params' world saved at `path` (what a stage costs does
    not depend on the weights); returns `path`."""
    world = World.from_params(params.data)
    torch.manual_seed(seed)
    save_base(path, BaseLM(params.base.model, world.vocab, world.max_len))
    return path


def train_and_evaluate(
    params: Params, variants: Sequence[str], seeds: Sequence[int], label: str
) -> float:
    """Train and evaluate every screening group (variant, seed) of `params` in this process;
    the mean seconds per group."""
    from stages import evaluate, train_cvae

    base = params.base.screening
    start = time.perf_counter()
    for seed in seeds:
        for variant in variants:
            train_cvae.run(params, base, variant, seed)
            evaluate.run(params, base, variant, seed)
            print(f"{label}: {variant} seed {seed} done", flush=True)
    return (time.perf_counter() - start) / (len(variants) * len(seeds))
