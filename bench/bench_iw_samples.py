"""How many defensive-mixture samples K the evaluation needs: the estimator's own noise.

    python bench/bench_iw_samples.py [--variant token_sum] [--seed 0] [--repeats 3]

Runs on the outputs of a default `dvc repro` (params.yaml paths). For each K it evaluates one
trained run `repeats` times with different sampling seeds and prints, for mean I^θ and mean
G^marg over the test split: the mean, the Monte Carlo standard error of that mean (the spread
across sampling seeds / sqrt(repeats)), the standard error over test examples, and the wall
time of one evaluation. The sampling noise shrinks with K; the example-level error does not.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from zgain.base.frozen import load_frozen
from zgain.core.environment import setup_torch
from zgain.core.runs import Run
from zgain.cvae.model import load_cvae
from zgain.evaluate.scoring import evaluate_examples
from zgain.params import load_params
from zgain.world.packed import load_packed
from zgain.world.synthetic import World

SAMPLES = (32, 64, 128, 256)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", default="token_sum")
    parser.add_argument("--rate", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    params = load_params()
    device, env = setup_torch(0)
    world = World.from_params(params.data)
    split, batch = load_packed(params.paths.synthetic_dir, "test", world)
    screening = params.base.screening  # the base of the screening runs, one of which is scored
    frozen = load_frozen(params.paths.base(screening), split, world.n_targets)
    base = frozen.sequence_surprisal
    run = Run(args.variant, args.rate, args.seed, screening)
    model, _ = load_cvae(run.checkpoint(params.paths.cvae_dir))
    print(f"{args.variant} seed {args.seed}, n_test = {len(split)}, {env.threads} threads")
    print("K     mean I    MC se(I)  ex. se(I)  mean Gm    MC se(Gm)  seconds")
    for k in SAMPLES:
        info, marg, seconds = [], [], []
        for repeat in range(args.repeats):
            started = time.perf_counter()
            scores = evaluate_examples(
                model,
                batch,
                iw_samples=k,
                batch_size=params.evaluate.batch_size,
                max_x_len=world.max_x_len,
                device=device,
                seed=1000 + repeat,
            )
            seconds.append(time.perf_counter() - started)
            per_example = scores.nll_marginal - scores.nll_post
            info.append(per_example.mean())
            marg.append((base - scores.nll_marginal).mean())
        example_se = per_example.std(ddof=1) / math.sqrt(len(per_example))
        mc_info = np.std(info, ddof=1) / math.sqrt(args.repeats)
        mc_marg = np.std(marg, ddof=1) / math.sqrt(args.repeats)
        print(
            f"{k:<5d} {np.mean(info):<9.4f} {mc_info:<9.4f} {example_se:<10.4f} "
            f"{np.mean(marg):<10.4f} {mc_marg:<10.4f} {np.mean(seconds):.1f}"
        )


if __name__ == "__main__":
    main()
