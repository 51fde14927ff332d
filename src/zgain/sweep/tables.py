"""Sweep reports over DVC experiments, from `dvc exp show`: one row per (experiment, variant)
of each experiment's reports/metrics.json, and, when the experiments vary the unified family's
(α, γ), capture and G^marg over that grid with the named variants placed on it
(docs/method.md#unified).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from zgain.cvae.terms import POSITIONS, terms_used

PARAM_BLOCKS = ("data.", "base.", "surprisal.", "cvae.", "evaluate.", "report.")
SWEEP_METRICS = ("z_information", "capture", "marginal_gain", "kl", "normalized_recovery")
FAMILY_METRICS = ("capture", "marginal_gain")


class SweepError(ValueError):
    """The experiments cannot make a sweep report (none found, no metrics, …)."""


@dataclass(frozen=True)
class Sweep:
    """The experiments of a sweep, flattened: `rows` one per (experiment, variant)."""

    changed: tuple[str, ...]  # params whose value differs between the experiments
    rows: pd.DataFrame  # experiment, <changed params>, variant, headline_rate, SWEEP_METRICS
    oracle_info: float  # the oracle's mean I* (the same test split in every experiment)


def is_experiment(row: Mapping) -> bool:
    """An experiment row of `dvc exp show` (not the workspace or its baseline commit)."""
    return row.get("typ") != "baseline" and row.get("State") not in ("Failed", "Queued", "Running")


def param_columns(rows: Sequence[Mapping]) -> list[str]:
    keys = dict.fromkeys(k for row in rows for k in row)
    return [k for k in keys if k.startswith(PARAM_BLOCKS)]


def changed_params(rows: Sequence[Mapping]) -> list[str]:
    """The params whose values differ between rows (a key absent from a row counts as None)."""
    return [k for k in param_columns(rows) if len({repr(row.get(k)) for row in rows}) > 1]


def variant_names(row: Mapping) -> list[str]:
    """The variants an experiment's reports/metrics.json holds, in its order."""
    names = []
    for key in row:
        parts = key.split(".")
        if len(parts) == 3 and parts[0] == "variants" and parts[2] == SWEEP_METRICS[0]:
            names.append(parts[1])
    return names


def flatten(tree: Mapping, prefix: str = "") -> dict[str, object]:
    """{"a": {"b": 1}} -> {"a.b": 1}, as `dvc exp show` flattens a metrics file."""
    flat: dict[str, object] = {}
    for key, value in tree.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            flat |= flatten(value, f"{name}.")
        else:
            flat[name] = value
    return flat


def with_report_metrics(
    rows: Sequence[Mapping], read: Callable[[str], Mapping]
) -> list[dict[str, object]]:
    """`rows` with each experiment's reports/metrics.json (read(rev)) flattened into its row.

    The DVC metric is the compact reports/capture.json; the sweep's other headline means (I^θ,
    G^marg, kl, recovery) live in reports/metrics.json, which every experiment commits.
    """
    out = []
    for row in rows:
        row = dict(row)
        if is_experiment(row) and not variant_names(row):
            row |= flatten(read(str(row.get("rev"))))
        out.append(row)
    return out


def number(value: object) -> float:
    return (
        float(value) if isinstance(value, int | float) and not isinstance(value, bool) else math.nan
    )


def build_sweep(rows: Sequence[Mapping]) -> Sweep:
    """The sweep over the experiment rows of `dvc exp show` (dvc.api.exp_show)."""
    experiments = [row for row in rows if is_experiment(row)]
    if not experiments:
        raise SweepError(
            "no finished experiment found: queue some with `dvc exp run --queue -S …` and run "
            "`dvc queue start`, then rerun"
        )
    changed = changed_params(experiments)
    records = []
    for row in experiments:
        name = row.get("Experiment") or str(row.get("rev"))
        variants = variant_names(row)
        if not variants:
            raise SweepError(f"experiment {name}: reports/metrics.json has no variant metrics")
        for variant in variants:
            record = {"experiment": name, **{k: row.get(k) for k in changed}}
            record |= {"variant": variant, "headline_rate": number(row.get("headline_rate"))}
            record |= {m: number(row.get(f"variants.{variant}.{m}")) for m in SWEEP_METRICS}
            records.append(record)
    oracle = {number(row.get("oracle_info")) for row in experiments}
    oracle_info = next(iter(oracle)) if len(oracle) == 1 else math.nan
    return Sweep(tuple(changed), pd.DataFrame(records), oracle_info)


def variant_weights(row: Mapping, variant: str) -> dict[str, float]:
    """The weights of `variant` in this experiment's params."""
    prefix = f"cvae.variants.{variant}.weights."
    return {k[len(prefix) :]: number(v) for k, v in row.items() if k.startswith(prefix)}


def family_variant(row: Mapping, variant: str) -> bool:
    """True when `variant` weights only the unified term in this experiment's params."""
    return terms_used(variant_weights(row, variant)) == {"unified"}


RunsOf = Callable[[str], pd.DataFrame]
"""rev -> that experiment's reports/tables/runs.csv (one row per run: variant, rate, seed, …)."""


def rate_means(runs: pd.DataFrame, variant: str) -> pd.DataFrame:
    """FAMILY_METRICS of `variant`'s runs at each rate (index: rate): the mean over the seeds
    with a finite value, and `n`, how many seeds the runs table holds at that rate. A variant
    the runs table lacks gets one row of NaN at each of the table's rates."""
    rows = runs[runs["variant"] == variant]
    if rows.empty:
        rates = sorted(runs["rate"].unique())
        return pd.DataFrame({m: math.nan for m in FAMILY_METRICS} | {"n": 0}, index=rates)
    finite = rows[list(FAMILY_METRICS)].where(np.isfinite(rows[list(FAMILY_METRICS)]))
    grouped = finite.groupby(rows["rate"], sort=True)
    return grouped.mean().assign(n=rows.groupby("rate", sort=True).size())


def rate_records(runs: pd.DataFrame, variant: str) -> list[dict]:
    """`rate_means` as one record per rate: `rate`, FAMILY_METRICS and `n` kept an integer (a
    row of the frame would make it a float)."""
    means = rate_means(runs, variant)
    return [
        {"rate": rate, **values, "n": int(values["n"])}
        for rate, values in zip(means.index, means.to_dict("records"), strict=True)
    ]


def family_points(rows: Sequence[Mapping], runs_of: RunsOf) -> pd.DataFrame:
    """One row per (experiment, unified-only variant, rate): alpha, gamma and FAMILY_METRICS
    (seed means at that rate, from the experiment's runs table)."""
    records = []
    for row in (r for r in rows if is_experiment(r)):
        for variant in variant_names(row):
            if not family_variant(row, variant):
                continue
            runs = runs_of(str(row.get("rev")))
            settings = f"cvae.variants.{variant}.unified."
            alpha, gamma = (number(row.get(settings + k, 0.0)) for k in ("alpha", "gamma"))
            for values in rate_records(runs, variant):
                record = {"experiment": row.get("Experiment"), "variant": variant}
                records.append(record | {"alpha": alpha, "gamma": gamma, **values})
    columns = ["experiment", "variant", "rate", "alpha", "gamma", *FAMILY_METRICS, "n"]
    return pd.DataFrame(records, columns=columns)


def family_place(weights: Mapping[str, float]) -> tuple[str, str] | None:
    """Where a variant sits on the family map: (term, note) for one weighted term with a
    `POSITIONS` entry (a replacement variant), or for `mean` plus one such term x (an additive
    variant, placed at x with a note giving both weights); None otherwise."""
    used = terms_used(dict(weights))
    if len(used) == 1 and used <= POSITIONS.keys():
        (name,) = used
        return name, POSITIONS[name].note
    extra = used - {"mean"}
    if "mean" in used and len(extra) == 1 and extra <= POSITIONS.keys():
        (name,) = extra
        note = f"additive: {weights['mean']:g}·mean + {weights[name]:g}·{name}"
        return name, "; ".join(filter(None, (POSITIONS[name].note, note)))
    return None


def named_points(rows: Sequence[Mapping], runs_of: RunsOf) -> pd.DataFrame:
    """The named variants placed on the family map (`family_place`) with their (α, γ) and their
    FAMILY_METRICS at each rate (seed means), averaged over the experiments that hold them."""
    records = []
    for row in (r for r in rows if is_experiment(r)):
        for variant in variant_names(row):
            place = family_place(variant_weights(row, variant))
            if place is None:
                continue
            runs = runs_of(str(row.get("rev")))
            name, note = place
            at = POSITIONS[name]
            for values in rate_records(runs, variant):
                record = {"variant": variant, "term": name, "alpha": at.alpha, "gamma": at.gamma}
                records.append(record | {"note": note, **values})
    keys = ["variant", "term", "alpha", "gamma", "note", "rate"]
    if not records:
        return pd.DataFrame(columns=[*keys, *FAMILY_METRICS, "n"])
    frame = pd.DataFrame(records)
    means = dict.fromkeys(FAMILY_METRICS, "mean") | {"n": "min"}  # n: seeds in every experiment
    return frame.groupby(keys, sort=False).agg(means).reset_index()
