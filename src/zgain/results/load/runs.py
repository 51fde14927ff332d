"""Reading the evaluate stage's outputs (docs/method.md#evaluation-quantities): each listed
run's metrics.json and examples.parquet, once per report; a missing or stale run raises
DataError naming the dvc command that produces it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

from zgain.core.errors import DataError
from zgain.core.io import padded, read_json, read_table
from zgain.core.runs import EVALUATE_STAGE, EXAMPLES_FILE, Run, Tier, rate_label
from zgain.evaluate.schema import (
    DECOMPOSITION_KEYS,
    ENVIRONMENT_KEY,
    EVAL_SCHEMA,
    RECOVERY_KEYS,
    USAGE_KEYS,
)

DEVICE_COLUMN, UNRECORDED = "device_kind", "unrecorded"
# the reference rows of the tables, and the top-level keys of reports/metrics.json
RESERVED_NAMES = frozenset(
    {"base", "oracle", "floor", "ceiling", "cap", "headline_rate", "oracle_info"}
)
"""Row labels of the report's reference rows; no variant may take these names."""


REQUIRED_KEYS: tuple[str, ...] = (*DECOMPOSITION_KEYS, *RECOVERY_KEYS, *USAGE_KEYS)

SPLIT_KEYS: tuple[str, ...] = (
    ("base_nll", "oracle_nll", "oracle_info", "oracle_marginal_gain", "oracle_gross_gain")
    + ("frac_gain_pop_ceiling", "frac_gain_ex_ceiling", "frac_gain_pop_tok_ceiling")
    + ("frac_z_information_ceiling", "probe_floor", "probe_ceiling", "kmeans_accuracy_floor")
    + ("kmeans_accuracy_ceiling", "kmeans_nmi_ceiling", "oracle_localization_share")
    + ("revealed_token_share", "mi_q_cap_nats", "iw_samples", "n_examples")
)
"""Metrics fixed by the test split, the frozen base and the evaluate settings: the same in every
run, so they are reference values without an interval. Runs that disagree are stale."""

SPLIT_RTOL, SPLIT_ATOL = 1e-6, 1e-9  # tolerance of "the same in every run"

EXAMPLE_COLUMNS = list(
    ("example_id", "variant", "seed", "strategy", "nll_post", "nll_marginal", "oracle_info")
    + ("token_z_information", "oracle_token_info")
)


@dataclass(frozen=True)
class EvalResults:
    """Every listed run's evaluation outputs at one target rate, in params order.

    runs: one row per (variant, seed): `variant`, `seed` and every number of its metrics.json
      (NaN where null), and the device kind that evaluated it (DEVICE_COLUMN). Units as
      in zgain.evaluate (nats/seq unless a share or count).
    positions: one row per (variant, seed, target position): `z_information_sum` (Σ i^θ_t,
      nats), `oracle_info_sum` (Σ i*_t, nats) and `n_tokens`, over the test examples long enough
      to have that position.
    strategies: one row per (variant, seed, hidden strategy index): `z_information_sum`
      (Σ_i (M_i − L_i), nats), `oracle_info_sum` (Σ_i I*_i, nats) and `n_examples`, over the
      test examples drawn with that strategy.
    """

    variants: tuple[str, ...]
    seeds: tuple[int, ...]
    rate: float  # the target KL C of these runs (nats per example)
    runs: pd.DataFrame
    positions: pd.DataFrame
    strategies: pd.DataFrame
    base: int = 0  # the base seed these runs trained on

    def values(self, variant: str, metric: str) -> np.ndarray:
        """(n_seeds,) values of one metric for one variant, in seed order (NaN if undefined)."""
        rows = self.runs[self.runs["variant"] == variant].set_index("seed")
        return rows[metric].reindex(list(self.seeds)).to_numpy(dtype=np.float64)

    def split_value(self, metric: str) -> float:
        """A SPLIT_KEYS metric: its common value (checked equal in every run at load time)."""
        return float(self.runs[metric].iloc[0])


def missing_run(run: Run, path: Path) -> DataError:
    return DataError(
        f"evaluation of variant {run.variant!r}, rate {rate_label(run.rate)}, seed {run.seed}, "
        f"base {run.base} is missing: {path} not found "
        f"(run `dvc repro {run.stage(EVALUATE_STAGE)}`)"
    )


def device_kind(environment: Mapping | None) -> str:
    """`cpu`, `cuda` or `mps` (the device type, without its index) of a run's environment entry.

    Float rounding differs between kinds, so runs of different kinds agree within the
    intervals over seeds, not digit by digit (docs/method.md#uncertainty-over-seeds)."""
    return str((environment or {}).get("device", UNRECORDED)).partition(":")[0]


def read_run_metrics(path: Path, run: Run) -> tuple[dict[str, float], str]:
    """The numbers of one metrics.json (null -> NaN) and the kind of device that evaluated it."""
    if not path.is_file():
        raise missing_run(run, path)
    raw = read_json(path)
    if not isinstance(raw, dict):
        raise DataError(f"{path}: expected a flat mapping of metrics, got {type(raw).__name__}")
    missing = [key for key in REQUIRED_KEYS if key not in raw]
    if missing:
        raise DataError(
            f"{path}: metrics {missing} are missing (stale output: run "
            f"`dvc repro {run.stage(EVALUATE_STAGE)}`)"
        )
    metrics = {}
    for key, value in raw.items():
        if key == ENVIRONMENT_KEY:
            continue
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
            raise DataError(f"{path}: metric {key!r} is {value!r}, not a number or null")
        metrics[key] = math.nan if value is None else float(value)
    return metrics, device_kind(raw.get(ENVIRONMENT_KEY))


def read_run_examples(path: Path, run: Run) -> pa.Table:
    """The columns of examples.parquet the report reads, checked against EVAL_SCHEMA."""
    variant, seed = run.variant, run.seed
    if not path.is_file():
        raise missing_run(run, path)
    table = read_table(path, EVAL_SCHEMA, columns=EXAMPLE_COLUMNS)
    found = set(zip(table["variant"].to_pylist(), table["seed"].to_pylist(), strict=True))
    if found != {(variant, seed)}:
        raise DataError(f"{path}: holds rows of runs {sorted(found)}, expected {(variant, seed)}")
    return table


def position_rows(table: pa.Table, variant: str, seed: int) -> pd.DataFrame:
    """Per target position t: Σ_i i^θ_{i,t}, Σ_i i*_{i,t} (nats) and the count of examples."""
    z_info, lengths = padded(table["token_z_information"], pad=0.0)  # (N, T), (N,)
    oracle, _ = padded(table["oracle_token_info"], pad=0.0, width=z_info.shape[1])
    present = np.arange(z_info.shape[1])[None, :] < lengths[:, None]  # (N, T)
    return pd.DataFrame(
        {
            "variant": variant,
            "seed": seed,
            "position": np.arange(z_info.shape[1]),
            "z_information_sum": np.where(present, z_info, 0.0).sum(0),
            "oracle_info_sum": np.where(present, oracle, 0.0).sum(0),
            "n_tokens": present.sum(0),
        }
    )


def strategy_rows(table: pa.Table, variant: str, seed: int) -> pd.DataFrame:
    """Per hidden strategy s: Σ_i (M_i − L_i), Σ_i I*_i (nats) and the count of examples."""
    frame = pd.DataFrame(
        {
            "strategy": table["strategy"].to_numpy().astype(np.int64),
            "z_information_sum": table["nll_marginal"].to_numpy() - table["nll_post"].to_numpy(),
            "oracle_info_sum": table["oracle_info"].to_numpy(),
            "n_examples": 1,
        }
    )
    sums = frame.groupby("strategy", sort=True).sum().reset_index()
    return sums.assign(variant=variant, seed=seed)[
        ["variant", "seed", "strategy", "z_information_sum", "oracle_info_sum", "n_examples"]
    ]


def check_split_keys(runs: pd.DataFrame) -> None:
    """Raise DataError when a SPLIT_KEYS metric differs between runs (stale or mixed outputs)."""
    for key in SPLIT_KEYS:
        values = runs[key].to_numpy(dtype=np.float64)
        if not np.allclose(values, values[0], rtol=SPLIT_RTOL, atol=SPLIT_ATOL, equal_nan=True):
            spread = runs.loc[:, ["variant", "seed", key]].to_dict("records")
            raise DataError(
                f"metric {key!r} depends only on the test split and the evaluate settings but "
                f"differs between runs ({spread}): stale outputs, run `dvc repro evaluate`"
            )


def load_results(
    eval_dir: str | Path,
    variants: Sequence[str],
    seeds: Sequence[int],
    rate: float,
    *,
    base: int,
    tier: Tier = Tier.SCREENING,
) -> EvalResults:
    """Read the listed runs of `tier`'s groups on base `base` at target rate `rate`; raise
    DataError naming a missing, stale or inconsistent run."""
    reserved = sorted(RESERVED_NAMES & set(variants))
    if reserved:
        raise DataError(f"variant names {reserved} are reserved for the report's reference rows")
    runs, positions, strategies = [], [], []
    reference_ids: np.ndarray | None = None
    for variant in variants:
        for seed in seeds:
            run = Run(variant, rate, seed, base, tier)
            where = run.eval_dir(eval_dir)
            metrics, device = read_run_metrics(run.eval_metrics(eval_dir), run)
            table = read_run_examples(run.eval_examples(eval_dir), run)
            if metrics["n_examples"] != table.num_rows:
                raise DataError(
                    f"{where}: metrics.json counts {metrics['n_examples']:.0f} examples "
                    f"but {EXAMPLES_FILE} has {table.num_rows} rows (stale or mixed outputs)"
                )
            ids = np.sort(table["example_id"].to_numpy())
            if reference_ids is None:
                reference_ids = ids
            elif not np.array_equal(ids, reference_ids):
                raise DataError(f"{where}: scores other test examples than the first run")
            runs.append({"variant": variant, "seed": seed, **metrics, DEVICE_COLUMN: device})
            positions.append(position_rows(table, variant, seed))
            strategies.append(strategy_rows(table, variant, seed))
    frame = pd.DataFrame(runs)
    check_split_keys(frame)
    return EvalResults(
        variants=tuple(variants),
        seeds=tuple(seeds),
        rate=rate,
        runs=frame,
        positions=pd.concat(positions, ignore_index=True),
        strategies=pd.concat(strategies, ignore_index=True),
        base=base,
    )


KEYS = ("variant", "rate", "seed")  # what names a run in `per_run`


def per_run(by_rate: Mapping[float, EvalResults], columns: Sequence[str]) -> pd.DataFrame:
    """One row per run at every rate: variant, rate, seed and those of `columns` its metrics
    hold."""
    frames = [
        at.runs[["variant", "seed", *(c for c in columns if c in at.runs)]].assign(rate=rate)
        for rate, at in by_rate.items()
    ]
    table = pd.concat(frames, ignore_index=True)
    return table[["variant", "rate", "seed", *(c for c in table if c not in KEYS)]]
