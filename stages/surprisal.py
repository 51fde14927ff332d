"""Stage `surprisal@<b>`: score every split with frozen base b into tokens/examples Parquet."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
from tqdm import tqdm

from zgain.base.model import load_base
from zgain.base.surprisal import EXAMPLES_SCHEMA, TOKENS_SCHEMA, score_tokens, surprisal_tables
from zgain.core.cli import BaseOption, run_stage
from zgain.core.environment import (
    DeviceOption,
    ThreadsOption,
    divide_cpus_by_default,
    setup_torch,
)
from zgain.core.io import BASE_SHA_KEY, sha256_file, sweep_temporaries, write_table
from zgain.params import Params, load_params
from zgain.world.packed import frames_of, load_packed
from zgain.world.splits import SPLITS

SCORING_SEED = 0  # scoring is deterministic; the seed only fixes torch's global state


def run(params: Params, base: int, device: str | None = None, threads: int | None = None) -> None:
    paths = params.paths.base(params.base.seed(base))
    frames = frames_of(params)
    sweep_temporaries(paths.surprisal_dir)
    torch_device, _ = setup_torch(SCORING_SEED, device=device, threads=threads)
    base_sha = sha256_file(paths.base_model)
    model = load_base(paths.base_model).to(torch_device)
    tokens, examples = [], []
    for split in tqdm(SPLITS, desc="surprisal", unit="split"):
        data, batch = load_packed(params.paths.synthetic_dir, split, frames)
        scores = score_tokens(
            model,
            batch,
            max_x_len=frames.max_x_len,
            batch_size=params.surprisal.batch_size,
            device=torch_device,
        )
        split_tokens, split_examples = surprisal_tables(split, data, scores.numpy(), batch)
        tokens.append(split_tokens)
        examples.append(split_examples)
    out = Path(paths.surprisal_dir)
    metadata = {BASE_SHA_KEY: base_sha}
    write_table(pa.concat_tables(tokens), out / "tokens.parquet", TOKENS_SCHEMA, metadata)
    write_table(pa.concat_tables(examples), out / "examples.parquet", EXAMPLES_SCHEMA, metadata)


def main(base: BaseOption, device: DeviceOption = None, threads: ThreadsOption = None) -> None:
    params = load_params()
    params.base.seed(base)
    divide_cpus_by_default(threads)
    run(params, base, device, threads)


if __name__ == "__main__":
    run_stage(main)
