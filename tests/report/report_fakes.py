"""Fake evaluation outputs with known numbers for the report tests.

See docs/method.md#evaluation-quantities and docs/method.md#uncertainty-over-seeds. Each run's
metrics.json holds every key of DECOMPOSITION_KEYS, RECOVERY_KEYS and the report's USAGE_KEYS;
its examples.parquet follows EVAL_SCHEMA. The numbers are chosen so that the expected report
can be computed by hand:

- z_information: token_mean 1, 2, 3 (mean 2, half-width t_{0.975,2}·1/√3); example_inverse
  5, 6.5, 7, so its per-seed differences to the baseline are 4, 4.5, 4 and its interval
  excludes the runner-up's mean: it is named best (as for capture = z_information / I*).
- marginal_gain: token_mean 0.1, 0.2, 0.3 and example_inverse 0, 0.12, 0.2: the leader's
  interval contains the runner-up's mean, so no variant is named.
- token_sum weights only `sum` (a likelihood objective) with marginal_gain around
  `sum_marginal` (−0.1 by default: damaged).

Runs exist at two target rates, RATES: the headline HEADLINE (nearest the oracle's I* = 10)
holds the numbers above; at the other rate z_information and kl are LOW_SCALE times them. Each
run's `kl_target` is its rate; the runs' KL are within 10% of it but token_sum's seed 2
(+20%). Training curves (dvclive TSVs) are written for the headline runs.

All of the above are screening runs on base SCREENING. make_params lists one base unless told
more; write_study writes every base's base.json (sha256 base_sha256(b), test excess
base_excess(b)) and, for every other base, its confirming runs: the screening numbers at the
headline rate with z_information raised by CONFIRM_SHIFT · b.
"""

from __future__ import annotations

import hashlib
import math
from pathlib import Path

import numpy as np
import pyarrow as pa
import yaml
from conftest import REPO_ROOT

from zgain.core.io import list_array, write_json, write_table
from zgain.core.runs import Run, Tier
from zgain.evaluate.schema import DECOMPOSITION_KEYS, ENVIRONMENT_KEY, EVAL_SCHEMA, RECOVERY_KEYS
from zgain.params import Params, parse_params
from zgain.results.load.runs import USAGE_KEYS

N_EXAMPLES = 30
SEEDS = (0, 1, 2)
SCREENING = 0  # the first of base.seeds: every screening run trains on it
CONFIRM_SHIFT = 0.5  # a confirming run's z_information is its screening value + this × base
HEADLINE, LOW = 2.5, 1.0
RATES = (LOW, HEADLINE)
LOW_SCALE = 0.5
CURVE_STEPS = (100, 200, 300, 400)  # validated steps of the default run (params.yaml: steps 400)
BASELINE = "token_mean"
WEIGHTS = {
    "token_mean": {"mean": 1.0},
    "token_sum": {"sum": 1.0},
    "example_inverse": {"ex": 1.0},
}
REMOVED = "dist_normalized"  # written to disk, absent from params: must never be read
REMOVED_WEIGHTS = {"dist": 1.0}
ORACLE_INFO = 10.0
SPLIT = {
    "base_nll": 20.0,
    "oracle_nll": 12.0,
    "oracle_info": ORACLE_INFO,
    "oracle_marginal_gain": 8.0,  # B − NLL*
    "oracle_gross_gain": 18.0,  # B − C*, C* = NLL* − I*
    "frac_gain_pop_ceiling": 0.9,
    "frac_gain_ex_ceiling": 0.91,
    "frac_gain_pop_tok_ceiling": 0.92,
    "frac_z_information_ceiling": 0.5,
    "probe_floor": 0.4,
    "probe_ceiling": 0.9,
    "kmeans_accuracy_floor": 0.25,
    "kmeans_accuracy_ceiling": 0.95,
    "kmeans_nmi_ceiling": 0.85,
    "oracle_localization_share": 0.97,
    "revealed_token_share": 0.3,
    "mi_q_cap_nats": math.log(N_EXAMPLES),
    "iw_samples": 64.0,
    "n_examples": float(N_EXAMPLES),
}
Z_INFORMATION = {
    "token_mean": (1.0, 2.0, 3.0),
    "token_sum": (0.5, 0.6, 0.7),
    "example_inverse": (5.0, 6.5, 7.0),
    REMOVED: (90.0, 91.0, 92.0),
}
MARGINAL_GAIN = {
    "token_mean": (0.1, 0.2, 0.3),
    "example_inverse": (0.0, 0.12, 0.2),
    REMOVED: (50.0, 51.0, 52.0),
}
# at the headline rate 2.5, within 10% but token_sum seed 2 (+20%: left out of the verdicts);
# at the other rate the same shares of its target
KL = {
    "token_mean": (2.3, 2.5, 2.7),
    "token_sum": (2.4, 2.5, 3.0),
    "example_inverse": (2.4, 2.5, 2.6),
}
TOKEN_Z = {"token_mean": 0.2, "token_sum": 0.1, "example_inverse": 0.6, REMOVED: 9.0}
ORACLE_TOKEN = 0.5  # i*_t = ORACLE_TOKEN · (t + 1) at every position t
NULL_METRIC = "token_info_spearman"  # null for token_sum in every seed
FAKE_ENVIRONMENT = {"device": "cpu", "dtype": "float32", "threads": 1, "torch_version": "x"}


def sum_marginal_values(sum_marginal: float) -> tuple[float, ...]:
    return (sum_marginal - 0.01, sum_marginal, sum_marginal + 0.01)


def fake_metrics(
    variant: str, seed: int, sum_marginal: float, rate: float = HEADLINE
) -> dict[str, float | None]:
    """One run's metrics.json content (without the environment entry)."""
    k = SEEDS.index(seed) if seed in SEEDS else 0
    marginal = {**MARGINAL_GAIN, "token_sum": sum_marginal_values(sum_marginal)}
    scale = 1.0 if rate == HEADLINE else LOW_SCALE
    z_info = Z_INFORMATION[variant][k] * scale
    gain = marginal[variant][k]
    kl = KL.get(variant, (3.0, 3.0, 3.0))[k] * rate / HEADLINE
    small = 0.01 * k + 0.001 * len(variant)  # a generic per-run value with a seed spread
    metrics: dict[str, float | None] = {
        key: 0.3 + small for key in (*DECOMPOSITION_KEYS, *RECOVERY_KEYS, *USAGE_KEYS)
    }
    metrics |= SPLIT
    metrics |= {
        "marginal_gain": gain,
        "z_information": z_info,
        "gross_gain": gain + z_info,
        "capture": z_info / ORACLE_INFO,
        "kl": kl,
        "net_gain": gain + z_info - kl,
        "normalized_recovery": 0.1 * (k + 1),
        "active_units": float(k + 1),
    }
    if variant == "token_sum":
        metrics[NULL_METRIC] = None
    metrics["kl_dim_0"] = kl
    metrics["kl_target"] = rate
    return metrics


def fake_examples(variant: str, seed: int) -> pa.Table:
    """EVAL_SCHEMA rows, shuffled; i^θ_{i,t} = TOKEN_Z[variant]·(t + 1) + 0.1·seed."""
    n_tokens = 2 + np.arange(N_EXAMPLES) % 4  # 2..5 target positions
    width = int(n_tokens.max())
    present = np.arange(width)[None, :] < n_tokens[:, None]
    steps = np.arange(1, width + 1)[None, :].repeat(N_EXAMPLES, 0).astype(float)
    token_z = np.where(present, TOKEN_Z[variant] * steps + 0.1 * seed, 0.0)
    oracle_tokens = np.where(present, ORACLE_TOKEN * steps, 0.0)
    base = 4.0 * n_tokens
    post = base - 1.0 - token_z.sum(1)
    order = np.random.default_rng([seed, len(variant)]).permutation(N_EXAMPLES)
    columns = {
        "example_id": np.arange(N_EXAMPLES) + 1000,
        "variant": [variant] * N_EXAMPLES,
        "seed": np.full(N_EXAMPLES, seed),
        "strategy": np.arange(N_EXAMPLES) % 4,
        "n_tokens": n_tokens,
        "surprisal_sum": base,
        "nll_post": post,
        "nll_marginal": post + token_z.sum(1),
        "kl": np.full(N_EXAMPLES, 2.0),
        "nll_shuffled": post + 0.5,
        "nll_prior": base - 0.5,
        "oracle_nll": base - 2.0,
        "oracle_info": oracle_tokens.sum(1),
    }
    table = pa.table({k: pa.array(np.asarray(v)[order]) for k, v in columns.items()})
    for name, values in (("token_z_information", token_z), ("oracle_token_info", oracle_tokens)):
        table = table.append_column(name, list_array(values[order], n_tokens[order]))
    return table


def curve_value(quantity: str, variant: str, seed: int, step: int) -> float:
    """The fake logged value of a training curve (distinct per quantity, run and step)."""
    return len(quantity) + len(variant) / 10 + seed / 100 + step / 1000


def write_curves(live_dir: Path, variant: str, rate: float, seed: int) -> None:
    """dvclive-style TSVs (`step`, quantity) of every CURVE_QUANTITIES and the rate
    controller's KL average `kl_ema` for one screening run (on base SCREENING)."""
    from zgain.results.curves import CURVE_QUANTITIES

    where = Run(variant, rate, seed, SCREENING).live_dir(live_dir) / "plots" / "metrics"
    where.mkdir(parents=True, exist_ok=True)
    for quantity in (*CURVE_QUANTITIES, "kl_ema"):
        lines = [f"step\t{quantity}"] + [
            f"{step}\t{curve_value(quantity, variant, seed, step)}" for step in CURVE_STEPS
        ]
        (where / f"{quantity}.tsv").write_text("\n".join(lines) + "\n")


def write_run(
    eval_dir: Path,
    variant: str,
    seed: int,
    sum_marginal: float = -0.1,
    rate: float = HEADLINE,
    run: Run | None = None,
    **overrides: float,
) -> None:
    """One run's examples.parquet and metrics.json (fake_metrics with `overrides`), at
    `run`'s folder (default: the screening run of variant, rate and seed)."""
    where = (run or Run(variant, rate, seed, SCREENING)).eval_dir(eval_dir)
    write_table(fake_examples(variant, seed), where / "examples.parquet", EVAL_SCHEMA)
    metrics = fake_metrics(variant, seed, sum_marginal, rate) | overrides
    write_json({**metrics, ENVIRONMENT_KEY: FAKE_ENVIRONMENT}, where / "metrics.json")


def write_runs(
    eval_dir: Path,
    seeds: tuple[int, ...] = SEEDS,
    sum_marginal: float = -0.1,
    live_dir: Path | None = None,
) -> None:
    """Every listed variant × rate × seed on the screening base, plus the removed variant (on
    disk only), and the runs' training curves under `live_dir` (default: `cvae_live` beside
    eval_dir)."""
    live_dir = live_dir or eval_dir.parent.parent / "dvclive" / "cvae"
    for variant in (*WEIGHTS, REMOVED):
        for rate in RATES:
            for seed in seeds:
                write_run(eval_dir, variant, seed, sum_marginal, rate)
                write_curves(live_dir, variant, rate, seed)


def base_sha256(base: int) -> str:
    """The fake checkpoint sha256 of base `base` (64 hex digits, distinct per base)."""
    return hashlib.sha256(f"fake base {base}".encode()).hexdigest()


def base_excess(base: int) -> float:
    """The fake test excess over the oracle of base `base` (nats/seq)."""
    return 0.05 * (base + 1)


ORACLE_TOKEN_SURPRISAL = (0.5, 0.1, 0.05)  # b*_t of the fake test split's positions 0, 1, 2


def base_gap(base: int, position: int) -> float:
    """The fake b_t − b*_t of base `base` at a position (every test example alike)."""
    return 0.01 * (base + 1) * (position + 1)


def write_base_tokens(params: Params, base: int, n_examples: int = 3) -> Path:
    """tokens.parquet of base `base` (the columns the report reads): n_examples test examples
    of 3 tokens with b_t = b*_t + base_gap, and one train example far off that must not count."""
    path = Path(params.paths.base(base).surprisal_dir) / "tokens.parquet"
    rows = [
        ("test", t, star + base_gap(base, t), star)
        for _ in range(n_examples)
        for t, star in enumerate(ORACLE_TOKEN_SURPRISAL)
    ] + [("train", 0, 9.0, 0.0)]
    split, position, surprisal, oracle = zip(*rows, strict=True)
    table = pa.table(
        {
            "split": list(split),
            "position": pa.array(position, pa.int32()),
            "surprisal": pa.array(surprisal, pa.float32()),
            "oracle_surprisal": pa.array(oracle, pa.float64()),
        }
    )
    write_table(table, path, table.schema)
    return path


def write_base_meta(params: Params, base: int) -> Path:
    """base.json of base `base`, as train_base@<base> writes it (the keys the report reads),
    and its tokens.parquet (write_base_tokens)."""
    path = Path(params.paths.base(base).base_meta)
    meta = {
        "seed": base,
        "sha256": base_sha256(base),
        "metrics": {"test_excess_nats": base_excess(base)},
    }
    write_json(meta, path)
    write_base_tokens(params, base)
    return path


def write_confirming_runs(params: Params, base: int, sum_marginal: float = -0.1) -> None:
    """The confirming runs of base `base`: cvae.confirm's variants × rates × seeds, with the
    screening numbers but z_information (and capture) raised by CONFIRM_SHIFT per base."""
    confirm, eval_dir = params.cvae.confirm, Path(params.paths.eval_dir)
    for variant in confirm.variants:
        for rate in confirm.rates:
            for seed in confirm.seeds:
                metrics = fake_metrics(variant, seed, sum_marginal, rate)
                z_info = float(metrics["z_information"]) + CONFIRM_SHIFT * base
                run = Run(variant, rate, seed, base, Tier.CONFIRMING)
                write_run(
                    eval_dir,
                    variant,
                    seed,
                    sum_marginal,
                    rate,
                    run,
                    z_information=z_info,
                    capture=z_info / ORACLE_INFO,
                )


def write_study(params: Params, sum_marginal: float = -0.1) -> None:
    """Every screening run of `params`' seeds (write_runs), every base's base.json and the
    confirming runs of every other base."""
    eval_dir, live_dir = Path(params.paths.eval_dir), Path(params.paths.cvae_live)
    write_runs(eval_dir, tuple(params.cvae.seeds), sum_marginal, live_dir)
    for base in params.base.seeds:
        write_base_meta(params, base)
        if base != params.base.screening:
            write_confirming_runs(params, base, sum_marginal)


def make_params(
    root: Path,
    seeds: tuple[int, ...] = SEEDS,
    variants: tuple[str, ...] = tuple(WEIGHTS),
    bases: tuple[int, ...] = (SCREENING,),
    confirm_seeds: tuple[int, ...] = (0,),
) -> Params:
    """params.yaml with paths under `root`, the listed variants and seeds, and the listed bases
    (the first screening): every variant is contested, at the headline rate only."""
    raw = yaml.safe_load((REPO_ROOT / "params.yaml").read_text())
    raw["paths"] = {k: str(root / v) for k, v in raw["paths"].items()}
    raw["base"]["seeds"] = list(bases)
    raw["cvae"]["seeds"] = list(seeds)
    raw["cvae"]["rates"] = list(RATES)
    raw["cvae"]["variants"] = {v: {"weights": WEIGHTS[v], "beta": None} for v in variants}
    raw["cvae"]["confirm"] = {
        "bases": list(bases[1:]),
        "seeds": list(confirm_seeds),
        "variants": list(variants),
        "rates": [HEADLINE],
    }
    raw["report"]["baseline_variant"] = BASELINE
    raw["report"]["pairs"] = [["token_sum", "example_inverse"]] if len(variants) > 2 else []
    raw["report"]["confidence"] = 0.95
    return parse_params(raw)


def build(
    root: Path,
    seeds: tuple[int, ...] = SEEDS,
    sum_marginal: float = -0.1,
    bases: tuple[int, ...] = (SCREENING,),
) -> Params:
    """Write the fake study under `root` and run the report stage on it."""
    from stages import report as report_stage

    params = make_params(root, seeds, bases=bases)
    write_study(params, sum_marginal)
    report_stage.run(params)
    return params
