"""The tables of `reports/`: run metrics over seeds, anchors, paired tests.

Inputs are the evaluate stage's files `<eval_dir>/<variant>/seed<seed>/{examples.parquet,
metrics.json}`, and only the (variant, seed) runs the caller lists are read: outputs of a
variant since removed from params stay on disk but never reach a report. Every table is a
long DataFrame with plain-number columns (`mean`, `low`, `high`), written as CSV as is and
rendered into Markdown by `zgain.report`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

from zgain.core.errors import DataError
from zgain.core.io import padded, read_json, read_table, run_dir
from zgain.evaluate.schema import ENVIRONMENT_KEY, EVAL_SCHEMA
from zgain.params import ReportParams
from zgain.report.statistics import bootstrap_ci, paired_wilcoxon

EXAMPLES_FILE = "examples.parquet"
METRICS_FILE = "metrics.json"
BASE, ORACLE = "base", "oracle"  # anchor rows; no variant may take these names
OVER_SEEDS, OVER_EXAMPLES, BY_DEFINITION = "seeds", "examples", "definition"

METRIC_GROUPS: dict[str, tuple[str, ...]] = {
    "gains": (
        "gain_gross_nats_seq",
        "gain_z_nats_seq",
        "gain_net_nats_seq",
        "gain_iw_nats_seq",
        "frac_gain_pop",
        "frac_gain_ex",
        "capture_ratio",
    ),
    "posterior": ("kl_nats", "active_units", "mi_q_nats"),
    "recovery": (
        "strategy_nmi",
        "strategy_matched_accuracy",
        "strategy_probe_accuracy",
        "localization_share",
        "spearman_surprisal_gain",
    ),
    "per_token": (
        "gain_gross_bits_tok",
        "gain_z_bits_tok",
        "gain_net_bits_tok",
        "gain_iw_bits_tok",
        "gain_z_bits_seq",
        "frac_gain_pop_tok",
    ),
}
"""Run metrics aggregated over seeds, one table per group, in report order."""

MI_CAP_KEY = "mi_q_cap_nats"  # log N: the most the MI estimator can return
N_EXAMPLES_KEY = "n_examples"
REQUIRED_METRICS = (*(m for group in METRIC_GROUPS.values() for m in group), MI_CAP_KEY)

EXAMPLE_COLUMNS = [
    "example_id",
    "variant",
    "seed",
    "surprisal_sum",
    "surprisal_mean",
    "nll_post",
    "nll_shuffled",
    "oracle_nll",
    "oracle_info",
    "gain",
    "token_gain",
]

PAIRED_MEASURES: dict[str, str] = {"z_gain": "z_gain", "gross_gain": "gain"}
"""Per-example gains (nats/seq) each variant is tested on against the baseline: measure name ->
column of `EvalResults.examples` (z_gain = L_shuffled − L_post, gain = B − L_post)."""


@dataclass(frozen=True)
class EvalResults:
    """Every listed run's evaluation outputs, in params order.

    runs: one row per (variant, seed) with every metric of its metrics.json (NaN where null).
    examples: one row per (variant, seed, test example): the scalar columns of EVAL_SCHEMA
      read here, plus `z_gain` = nll_shuffled − nll_post.
    positions: one row per (variant, seed, position): `token_gain_sum` (nats) and `n_tokens`
      over the examples long enough to have that position.
    """

    variants: tuple[str, ...]
    seeds: tuple[int, ...]
    runs: pd.DataFrame
    examples: pd.DataFrame
    positions: pd.DataFrame


def _missing(variant: str, seed: int, path: Path) -> DataError:
    return DataError(
        f"evaluation of variant {variant!r}, seed {seed} is missing: {path} not found "
        f"(run `dvc repro evaluate@{variant}-{seed}`)"
    )


def _read_run_metrics(path: Path, variant: str, seed: int) -> dict[str, float]:
    if not path.is_file():
        raise _missing(variant, seed, path)
    raw = read_json(path)
    if not isinstance(raw, dict):
        raise DataError(f"{path}: expected a flat mapping of metrics, got {type(raw).__name__}")
    for key in (*REQUIRED_METRICS, N_EXAMPLES_KEY):
        if key not in raw:
            raise DataError(f"{path}: metric {key!r} is missing")
    metrics = {}
    for key, value in raw.items():
        if key == ENVIRONMENT_KEY:
            continue
        if value is not None and not isinstance(value, int | float):
            raise DataError(f"{path}: metric {key!r} is {value!r}, not a number or null")
        metrics[key] = math.nan if value is None else float(value)
    return metrics


def _read_run_examples(path: Path, variant: str, seed: int) -> pa.Table:
    if not path.is_file():
        raise _missing(variant, seed, path)
    table = read_table(path, EVAL_SCHEMA, columns=EXAMPLE_COLUMNS)
    found = set(zip(table["variant"].to_pylist(), table["seed"].to_pylist(), strict=True))
    if found != {(variant, seed)}:
        raise DataError(f"{path}: holds rows of runs {sorted(found)}, expected {(variant, seed)}")
    return table


def _position_rows(table: pa.Table, variant: str, seed: int) -> pd.DataFrame:
    gains, lengths = padded(table["token_gain"], pad=0.0)  # (N, T) nats, (N,)
    present = np.arange(gains.shape[1])[None, :] < lengths[:, None]  # (N, T)
    return pd.DataFrame(
        {
            "variant": variant,
            "seed": seed,
            "position": np.arange(gains.shape[1]),
            "token_gain_sum": np.where(present, gains, 0.0).sum(0),
            "n_tokens": present.sum(0),
        }
    )


def load_results(
    eval_dir: str | Path, variants: Sequence[str], seeds: Sequence[int]
) -> EvalResults:
    """Read the listed runs' evaluation outputs; raise DataError naming a missing or bad run."""
    reserved = sorted({BASE, ORACLE} & set(variants))
    if reserved:
        raise DataError(f"variant names {reserved} are reserved for the report's anchor rows")
    runs, examples, positions = [], [], []
    reference_ids: np.ndarray | None = None
    for variant in variants:
        for seed in seeds:
            where = run_dir(eval_dir, variant, seed)
            table = _read_run_examples(where / EXAMPLES_FILE, variant, seed)
            metrics = _read_run_metrics(where / METRICS_FILE, variant, seed)
            if metrics[N_EXAMPLES_KEY] != table.num_rows:
                raise DataError(
                    f"{where}: metrics.json counts {metrics[N_EXAMPLES_KEY]:.0f} examples "
                    f"but {EXAMPLES_FILE} has {table.num_rows} rows (stale or mixed outputs)"
                )
            ids = np.sort(table["example_id"].to_numpy())
            if reference_ids is None:
                reference_ids = ids
            elif not np.array_equal(ids, reference_ids):
                raise DataError(f"{where}: scores other test examples than the first run")
            runs.append({"variant": variant, "seed": seed, **metrics})
            examples.append(table.drop_columns(["token_gain"]).to_pandas())
            positions.append(_position_rows(table, variant, seed))
    frame = pd.concat(examples, ignore_index=True)
    frame["variant"] = frame["variant"].astype(str)
    frame["z_gain"] = frame["nll_shuffled"] - frame["nll_post"]
    return EvalResults(
        variants=tuple(variants),
        seeds=tuple(seeds),
        runs=pd.DataFrame(runs),
        examples=frame,
        positions=pd.concat(positions, ignore_index=True),
    )


def interval(values: np.ndarray, settings: ReportParams) -> tuple[float, float, float, int]:
    """(mean, low, high, n) of the finite `values`: percentile-bootstrap CI of the mean."""
    values = np.asarray(values, dtype=np.float64)
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return math.nan, math.nan, math.nan, 0
    mean, low, high = bootstrap_ci(
        finite, confidence=settings.confidence, seed=settings.seed, n_resamples=settings.n_resamples
    )
    return mean, low, high, int(finite.size)


def _row(variant: str, metric: str, stats: tuple[float, float, float, int], over: str) -> dict:
    mean, low, high, n = stats
    return {
        "variant": variant,
        "metric": metric,
        "mean": mean,
        "low": low,
        "high": high,
        "n": n,
        "over": over,
    }


def seed_table(
    results: EvalResults, metrics: Sequence[str], settings: ReportParams
) -> pd.DataFrame:
    """Mean and CI over seeds of each run metric, per variant (null seeds left out; n counts)."""
    rows = []
    for variant in results.variants:
        runs = results.runs[results.runs["variant"] == variant]
        for metric in metrics:
            stats = interval(runs[metric].to_numpy(), settings)
            rows.append(_row(variant, metric, stats, OVER_SEEDS))
    return pd.DataFrame(rows)


def per_example(results: EvalResults) -> pd.DataFrame:
    """One row per test example: its frozen base and oracle quantities (equal in every run)."""
    columns = ["surprisal_sum", "surprisal_mean", "oracle_nll", "oracle_info"]
    return results.examples.groupby("example_id")[columns].mean()


def anchor_table(results: EvalResults, settings: ReportParams) -> pd.DataFrame:
    """The base and oracle rows, with CIs over the test examples.

    base: mean B, mean −log p(y|x) and the base's excess mean(B − (−log p(y|x))), nats/seq.
    oracle: mean I*, the z-gain of a latent that knows the strategy, whose capture ratio is 1.
    """
    data = per_example(results)
    b, nll, info = (data[c].to_numpy() for c in ("surprisal_sum", "oracle_nll", "oracle_info"))
    return pd.DataFrame(
        [
            _row(BASE, "surprisal_sum_nats", interval(b, settings), OVER_EXAMPLES),
            _row(BASE, "oracle_nll_nats", interval(nll, settings), OVER_EXAMPLES),
            _row(BASE, "base_excess_nats", interval(b - nll, settings), OVER_EXAMPLES),
            _row(ORACLE, "oracle_info_nats", interval(info, settings), OVER_EXAMPLES),
            _row(ORACLE, "capture_ratio", (1.0, 1.0, 1.0, len(data)), BY_DEFINITION),
        ]
    )


def oracle_gain_rows(anchors: pd.DataFrame) -> pd.DataFrame:
    """The oracle as a row of the gains table: its z-gain is I*, its capture ratio 1."""
    oracle = anchors[anchors["variant"] == ORACLE].copy()
    oracle["metric"] = oracle["metric"].replace({"oracle_info_nats": "gain_z_nats_seq"})
    return oracle.reset_index(drop=True)


def paired_table(results: EvalResults, baseline: str) -> pd.DataFrame:
    """Two-sided Wilcoxon signed-rank tests of each variant against `baseline`, per example.

    Each per-example gain (PAIRED_MEASURES) is first averaged over seeds, then paired by
    example_id; `median_difference` is the median of variant − baseline, nats/seq.
    """
    by_example = results.examples.groupby(["variant", "example_id"])
    means = by_example[list(PAIRED_MEASURES.values())].mean()
    reference = means.loc[baseline]
    rows = []
    for variant in results.variants:
        if variant == baseline:
            continue
        other = means.loc[variant].reindex(reference.index)
        for measure, column in PAIRED_MEASURES.items():
            a, b = other[column].to_numpy(), reference[column].to_numpy()
            statistic, p_value = paired_wilcoxon(a, b)
            rows.append(
                {
                    "variant": variant,
                    "baseline": baseline,
                    "measure": measure,
                    "n": len(a),
                    "median_difference": float(np.median(a - b)),
                    "statistic": statistic,
                    "p_value": p_value,
                }
            )
    columns = ["variant", "baseline", "measure", "n", "median_difference", "statistic", "p_value"]
    return pd.DataFrame(rows, columns=columns)


def gain_by_position(results: EvalResults) -> pd.DataFrame:
    """Mean token gain b_t − ℓ_t (nats) per (variant, position), pooled over seeds."""
    pooled = results.positions.groupby(["variant", "position"], sort=False)[
        ["token_gain_sum", "n_tokens"]
    ].sum()
    pooled = pooled[pooled["n_tokens"] > 0].reset_index()
    pooled["token_gain"] = pooled["token_gain_sum"] / pooled["n_tokens"]
    return pooled[["variant", "position", "token_gain"]]


def rate_gain(results: EvalResults) -> pd.DataFrame:
    """One row per run: its KL rate and z-attributable gain (nats)."""
    return results.runs[["variant", "seed", "kl_nats", "gain_z_nats_seq"]].reset_index(drop=True)


def _json_number(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None  # JSON has no NaN


def metrics_summary(results: EvalResults, anchors: pd.DataFrame) -> dict[str, dict]:
    """{variant: {metric: mean over seeds}} plus the base and oracle anchors, for dvc metrics."""
    names = [c for c in results.runs.columns if c not in ("variant", "seed")]
    out: dict[str, dict] = {}
    for variant in results.variants:
        runs = results.runs[results.runs["variant"] == variant]
        out[variant] = {m: _json_number(runs[m].mean(skipna=True)) for m in names}
    for row in (BASE, ORACLE):
        rows = anchors[anchors["variant"] == row]
        out[row] = {m: _json_number(v) for m, v in zip(rows["metric"], rows["mean"], strict=True)}
    out[ORACLE]["gain_z_nats_seq"] = out[ORACLE]["oracle_info_nats"]
    return out


def mi_cap(results: EvalResults) -> float:
    """log N, the cap of the MI estimate, over the listed runs (all score the same test split)."""
    return float(results.runs[MI_CAP_KEY].max())
