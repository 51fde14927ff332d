"""Stage `evaluate@<variant>-<rate>-<seed>`: gain decomposition, posterior usage, recovery."""

from __future__ import annotations

import math

from zgain.base.frozen import load_frozen
from zgain.core.cli import RateOption, SeedOption, VariantOption, run_stage
from zgain.core.environment import DeviceOption, ThreadsOption, setup_torch
from zgain.core.io import check_provenance, run_dir, sweep_temporaries, write_json, write_table
from zgain.cvae.model import load_cvae
from zgain.evaluate.run_metrics import evaluation_table, revealed_positions, run_metrics
from zgain.evaluate.schema import ENVIRONMENT_KEY, EVAL_SCHEMA, KL_TARGET_KEY
from zgain.evaluate.scoring import evaluate_examples
from zgain.params import Params, load_params
from zgain.world.packed import load_packed
from zgain.world.synthetic import World


def run(
    params: Params,
    variant: str,
    rate: float,
    seed: int,
    device: str | None = None,
    threads: int | None = None,
) -> dict[str, float]:
    world = World.from_params(params.data)
    settings = params.evaluate
    params.cvae.variant(variant)  # an unknown variant stops here, by name
    rate = params.cvae.rate(rate)
    sweep_temporaries(run_dir(params.paths.eval_dir, variant, rate, seed))
    torch_device, environment = setup_torch(settings.seed, device=device, threads=threads)
    split, batch = load_packed(params.paths.synthetic_dir, "test", world)
    frozen = load_frozen(params.paths, split, world.n_targets)
    checkpoint = run_dir(params.paths.cvae_dir, variant, rate, seed).with_suffix(".pt")
    model, payload = load_cvae(checkpoint)
    check_provenance(str(checkpoint), payload.get("base_sha256"), params.paths.base_model)
    scores = evaluate_examples(
        model,
        batch,
        iw_samples=settings.iw_samples,
        batch_size=settings.batch_size,
        max_x_len=world.max_x_len,
        device=torch_device,
        seed=settings.seed,
    )
    revealed = revealed_positions(split, frozen.mask, settings.reveal_min_nats)
    out = run_dir(params.paths.eval_dir, variant, rate, seed)
    base = frozen.sequence_surprisal
    table = evaluation_table(variant, seed, split, base, frozen.mask, scores)
    metrics = run_metrics(
        split,
        base,
        frozen.mask,
        scores,
        revealed,
        iw_samples=settings.iw_samples,
        probe_test_fraction=settings.probe_test_fraction,
        seed=settings.seed,
    )
    write_table(table, out / "examples.parquet", EVAL_SCHEMA)
    # JSON has no NaN: an undefined metric (e.g. a correlation of a constant) is written as null.
    finite = {k: (v if math.isfinite(v) else None) for k, v in metrics.items()}
    record = {
        **finite,
        KL_TARGET_KEY: payload.get(KL_TARGET_KEY),
        ENVIRONMENT_KEY: environment.as_dict(),
    }
    write_json(record, out / "metrics.json")
    return metrics


def main(
    variant: VariantOption,
    rate: RateOption,
    seed: SeedOption,
    device: DeviceOption = None,
    threads: ThreadsOption = None,
) -> None:
    run(load_params(), variant, rate, seed, device, threads)


if __name__ == "__main__":
    run_stage(main)
