"""Stage `generate`: the synthetic world with its exact oracle, one Parquet file per split."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from tqdm import tqdm

from zgain.core.cli import run_stage
from zgain.core.io import sweep_temporaries, write_table
from zgain.params import DataParams, load_params
from zgain.world.splits import SPLITS, SYNTHETIC_SCHEMA, first_example_id, sample_table, split_seed
from zgain.world.synthetic import World, sample


def run(data: DataParams, out_dir: Path) -> None:
    world = World.from_params(data)
    sweep_temporaries(out_dir)
    sizes = data.sizes()
    for split in tqdm(SPLITS, desc="generate", unit="split"):
        rng = np.random.default_rng(split_seed(data.seed, split))
        drawn = sample(world, sizes[split], rng)
        table = sample_table(drawn, split, first_example_id(sizes, split))
        write_table(table, out_dir / f"{split}.parquet", SYNTHETIC_SCHEMA)


def main() -> None:
    params = load_params()
    run(params.data, Path(params.paths.synthetic_dir))


if __name__ == "__main__":
    run_stage(main)
