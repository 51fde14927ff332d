"""Stage `surprisal`: score every split with the frozen base into tokens/examples Parquet."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import typer
from tqdm import tqdm

from zgain.data import SPLITS
from zgain.io import BASE_SHA_KEY, EXAMPLES_SCHEMA, TOKENS_SCHEMA, sha256_file, write_table
from zgain.models import device_auto, load_base
from zgain.params import Params, load_params
from zgain.runtime import load_packed
from zgain.surprisal import score_tokens, surprisal_tables
from zgain.training import configure_torch


def run(params: Params) -> None:
    world = params.data.world()
    configure_torch(params.surprisal.threads, seed=0)
    device = device_auto(params.surprisal.device)
    base_sha = sha256_file(params.paths.base_model)
    model = load_base(params.paths.base_model).to(device)
    tokens, examples = [], []
    for split in tqdm(SPLITS, desc="surprisal", unit="split"):
        data, batch = load_packed(params.paths.synthetic_dir, split, world)
        scores = score_tokens(
            model,
            batch,
            max_x_len=world.length_max,
            batch_size=params.surprisal.batch_size,
            device=device,
        )
        split_tokens, split_examples = surprisal_tables(split, data, scores.numpy(), batch)
        tokens.append(split_tokens)
        examples.append(split_examples)
    out = Path(params.paths.surprisal_dir)
    metadata = {BASE_SHA_KEY: base_sha}
    write_table(pa.concat_tables(tokens), out / "tokens.parquet", TOKENS_SCHEMA, metadata)
    write_table(pa.concat_tables(examples), out / "examples.parquet", EXAMPLES_SCHEMA, metadata)


def main() -> None:
    run(load_params())


if __name__ == "__main__":
    typer.run(main)
