"""Stage `evaluate@<variant>-<seed>`: test-split gains, posterior usage and strategy recovery."""

from __future__ import annotations

import math

import typer

from zgain.evaluation import evaluate_examples
from zgain.frozen import load_frozen
from zgain.io import EVAL_SCHEMA, check_provenance, run_dir, write_json, write_table
from zgain.models import KIND_CVAE, device_auto, load_cvae, read_checkpoint
from zgain.params import Params, load_params
from zgain.runtime import load_packed
from zgain.summary import evaluation_table, revealed_positions, run_metrics
from zgain.tracking import SeedOption, VariantOption
from zgain.training import configure_torch


def run(params: Params, variant: str, seed: int) -> dict[str, float]:
    world = params.data.world()
    settings = params.evaluate
    configure_torch(settings.threads, settings.seed)
    device = device_auto(settings.device)
    split, batch = load_packed(params.paths.synthetic_dir, "test", world)
    frozen = load_frozen(params.paths, split, world.max_y_len + 1)
    checkpoint = run_dir(params.paths.cvae_dir, variant, seed).with_suffix(".pt")
    model = load_cvae(checkpoint)
    check_provenance(
        str(checkpoint),
        read_checkpoint(checkpoint, KIND_CVAE).get("base_sha256"),
        params.paths.base_model,
    )
    scores = evaluate_examples(
        model,
        batch,
        posterior_samples=settings.posterior_samples,
        iw_samples=settings.iw_samples,
        batch_size=settings.batch_size,
        max_x_len=world.length_max,
        device=device,
        seed=settings.seed,
    )
    revealed = revealed_positions(split, frozen.mask, settings.reveal_min_nats)
    out = run_dir(params.paths.eval_dir, variant, seed)
    table = evaluation_table(variant, seed, split, frozen.surprisal, frozen.mask, scores, revealed)
    metrics = run_metrics(
        split,
        frozen.surprisal,
        frozen.mask,
        scores,
        revealed,
        n_strategies=world.n_strategies,
        probe_test_fraction=settings.probe_test_fraction,
        seed=settings.seed,
    )
    write_table(table, out / "examples.parquet", EVAL_SCHEMA)
    # JSON has no NaN: an undefined metric (e.g. a correlation of a constant) is written as null.
    write_json(
        {k: (v if math.isfinite(v) else None) for k, v in metrics.items()}, out / "metrics.json"
    )
    return metrics


def main(variant: VariantOption, seed: SeedOption) -> None:
    run(load_params(), variant, seed)


if __name__ == "__main__":
    typer.run(main)
