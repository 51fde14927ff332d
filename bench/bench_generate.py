"""Time drawing and tabulating 100k examples of the default world, single-threaded.

Prints the best of three wall-clock times, in seconds, of `zgain.world.synthetic.sample`
followed by `zgain.world.splits.sample_table`. Run from the repository root:
`python bench/bench_generate.py`.
"""

from __future__ import annotations

import os

# One thread for every BLAS/OpenMP pool, set before numpy is imported so the pools obey it.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from zgain.params import load_params  # noqa: E402
from zgain.world.splits import sample_table, split_seed  # noqa: E402
from zgain.world.synthetic import World, sample  # noqa: E402

N_EXAMPLES = 100_000
REPEATS = 3
PARAMS = Path(__file__).resolve().parents[1] / "params.yaml"


def time_once(n: int) -> tuple[float, float]:
    """Seconds spent in `sample` and in `sample_table` for n examples of the default world."""
    data = load_params(PARAMS).data
    world = World.from_params(data)
    rng = np.random.default_rng(split_seed(data.seed, "train"))
    start = time.perf_counter()
    drawn = sample(world, n, rng)
    sampled = time.perf_counter()
    table = sample_table(drawn, "train", 0)
    done = time.perf_counter()
    assert table.num_rows == n
    return sampled - start, done - sampled


def main() -> None:
    times = [time_once(N_EXAMPLES) for _ in range(REPEATS)]
    best = min(times, key=sum)
    print(
        f"generate {N_EXAMPLES} examples (default world, 1 thread), best of {REPEATS}: "
        f"{sum(best):.3f} s (sample {best[0]:.3f} s + sample_table {best[1]:.3f} s)"
    )


if __name__ == "__main__":
    main()
