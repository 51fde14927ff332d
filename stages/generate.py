"""Stage `generate`: the three splits, one Parquet file each: the synthetic world with its exact
oracle, or the user's own pairs (`data.source: pairs`, docs/own-data.md) with their frames."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from tqdm import tqdm

from zgain.core.cli import run_stage
from zgain.core.io import replaced_dir, sweep_temporaries, write_json, write_table
from zgain.params import DataParams, PairsParams, Params, load_params
from zgain.world.frames import FRAMES_FILE, frames_record
from zgain.world.pairs import check_sizes, pairs_frames, read_pairs, split_rows, split_table
from zgain.world.splits import SPLITS, SYNTHETIC_SCHEMA, first_example_id, sample_table, split_seed
from zgain.world.synthetic import World, sample


def run(data: DataParams, out_dir: Path) -> None:
    world = World.from_params(data)
    sweep_temporaries(out_dir)
    sizes = data.sizes()
    with replaced_dir(out_dir) as built:  # the old splits stay until every new one is written
        for split in tqdm(SPLITS, desc="generate", unit="split"):
            rng = np.random.default_rng(split_seed(data.seed, split))
            drawn = sample(world, sizes[split], rng)
            table = sample_table(drawn, split, first_example_id(sizes, split))
            write_table(table, built / f"{split}.parquet", SYNTHETIC_SCHEMA)


def run_pairs(params: Params, out_dir: Path) -> dict[str, int]:
    """Read, check and split the pairs file, then write the splits and their frames; every
    check runs before the first write. The split sizes."""
    data = params.data
    assert isinstance(data, PairsParams)
    pairs = read_pairs(data)
    rows = split_rows(pairs, data)
    sizes = {split: len(chosen) for split, chosen in rows.items()}
    check_sizes(sizes, params, data.file)
    sweep_temporaries(out_dir)
    with replaced_dir(out_dir) as built:
        for split in SPLITS:
            table = split_table(pairs, rows[split], split, first_example_id(sizes, split))
            write_table(table, built / f"{split}.parquet", SYNTHETIC_SCHEMA)
        record = frames_record(pairs_frames(pairs, data))
        write_json({**record, "sizes": sizes, "truncated": pairs.truncated}, built / FRAMES_FILE)
    cut = ", ".join(f"{n} {side}" for side, n in pairs.truncated.items() if n)
    print(f"generate: {sum(sizes.values())} pairs ({sizes}); truncated: {cut or 'none'}")
    return sizes


def main() -> None:
    params = load_params()
    if isinstance(params.data, DataParams):
        run(params.data, Path(params.paths.synthetic_dir))
    else:
        run_pairs(params, Path(params.paths.synthetic_dir))


if __name__ == "__main__":
    run_stage(main)
