"""A sweep as a comparison (docs/usage.md#sweeps): each experiment against a baseline run, at
the headline rate, deltas paired by seed with their t-interval at report.confidence; on capture
and G^marg each delta gets the report's verdict (statistics.decide, Holm over one experiment ×
metric). The params and variants that differ from the baseline are listed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from zgain.report.render.markdown import bracket, frame_table, percent
from zgain.stats.intervals import t_interval
from zgain.stats.rule import Evidence, decide
from zgain.sweep.tables import (
    SWEEP_METRICS,
    SweepError,
    is_experiment,
    param_columns,
)

DEFAULT = "null (common value)"
"""How a param whose value is null (a variant using cvae.common's value) is shown."""
DELTAS = ("experiment", "variant", "metric", "baseline", "value", "delta", "low", "high", "n")
DELTAS += ("p", "tost_low", "tost_high")
"""comparison.csv's columns: the seed-paired delta experiment − baseline and its tests."""


@dataclass(frozen=True)
class Comparison:
    baseline: str
    params: pd.DataFrame  # experiment, param, baseline, experiment value
    variants: pd.DataFrame  # experiment, added, removed
    deltas: pd.DataFrame  # DELTAS, then p_holm and verdict
    confidence: float  # the level of the deltas' intervals


def shown(value: object) -> object:
    return DEFAULT if value is None or value == "None" else value


def baseline_row(rows: Sequence[Mapping], name: str | None) -> Mapping:
    """The row named `name` (an experiment or a rev), else the committed baseline (not the
    workspace)."""
    for row in rows:
        if name is None and row.get("typ") == "baseline" and row.get("rev") != "workspace":
            return row
        if name is not None and name in (row.get("Experiment"), row.get("rev")):
            return row
    raise SweepError(f"no baseline {name or 'commit'} among the rows of `dvc exp show`")


def label(row: Mapping) -> str:
    return str(row.get("Experiment") or row.get("rev"))


def param_differences(base: Mapping, row: Mapping) -> list[dict]:
    keys = param_columns([base, row])
    return [
        {"param": k, "baseline": shown(base.get(k)), "value": shown(row.get(k))}
        for k in keys
        if repr(base.get(k)) != repr(row.get(k))
    ]


def paired_deltas(
    base_runs: pd.DataFrame, runs: pd.DataFrame, rate: float, confidence: float
) -> list[tuple]:
    """Per (variant, metric) both hold at `rate`: the DELTAS after `experiment`."""
    out = []
    base_at, at = base_runs[base_runs["rate"] == rate], runs[runs["rate"] == rate]
    for variant in [v for v in at["variant"].unique() if v in set(base_at["variant"])]:
        a = base_at[base_at["variant"] == variant].set_index("seed")
        b = at[at["variant"] == variant].set_index("seed")
        seeds = sorted(set(a.index) & set(b.index))
        for metric in SWEEP_METRICS:
            if metric not in a or metric not in b:
                continue
            delta = (b.loc[seeds, metric] - a.loc[seeds, metric]).to_numpy(dtype=float)
            interval = t_interval(delta, confidence)  # NaN bounds with fewer than 2 seeds
            evidence = Evidence.of_values(delta, confidence)
            means = (float(a[metric].mean()), float(b[metric].mean()))
            tests = (evidence.p, evidence.tost_low, evidence.tost_high)
            out.append((variant, metric, *means, *interval.row().values(), *tests))
    return out


def with_verdicts(
    deltas: pd.DataFrame, margins: Mapping[str, float], confidence: float
) -> pd.DataFrame:
    """`deltas` with p_holm and verdict on the metrics `margins` names (δ per metric); the
    family of Holm's adjustment is one experiment × metric; other metrics get no verdict."""
    out = deltas.assign(p_holm=float("nan"), verdict="")
    for (_, metric), rows in out.groupby(["experiment", "metric"], sort=False):
        if metric not in margins:
            continue
        family = [
            Evidence(r.delta, int(r.n), r.p, r.tost_low, r.tost_high)
            for r in rows.itertuples(index=False)
        ]
        decided = decide(family, margins[metric], confidence)
        out.loc[rows.index, "p_holm"] = [ph for ph, _ in decided]
        out.loc[rows.index, "verdict"] = [verdict for _, verdict in decided]
    return out


def compare(
    rows: Sequence[Mapping],
    read_runs: Callable[[str], pd.DataFrame],
    read_metrics: Callable[[str], Mapping],
    *,
    baseline: str | None = None,
    confidence: float = 0.95,
    margins: Mapping[str, float] | None = None,
) -> Comparison:
    """Every finished experiment of `rows` against the baseline; read_runs(rev) gives that
    run's reports/tables/runs.csv, read_metrics(rev) its reports/metrics.json."""
    base = baseline_row(rows, baseline)
    experiments = [r for r in rows if is_experiment(r) and label(r) != label(base)]
    if not experiments:
        raise SweepError("no finished experiment to compare with the baseline")
    base_rev = str(base.get("rev"))
    base_runs, base_variants = read_runs(base_rev), set(read_metrics(base_rev)["variants"])
    params, variants, deltas = [], [], []
    for row in experiments:
        name, rev = label(row), str(row.get("rev"))
        metrics = read_metrics(rev)
        params += [{"experiment": name, **d} for d in param_differences(base, row)]
        names = set(metrics["variants"])
        variants.append(
            {
                "experiment": name,
                "added": ", ".join(sorted(names - base_variants)) or "none",
                "removed": ", ".join(sorted(base_variants - names)) or "none",
            }
        )
        found = paired_deltas(base_runs, read_runs(rev), metrics["headline_rate"], confidence)
        deltas += [(name, *d) for d in found]
    return Comparison(
        label(base),
        pd.DataFrame(params, columns=["experiment", "param", "baseline", "value"]),
        pd.DataFrame(variants, columns=["experiment", "added", "removed"]),
        pd.DataFrame(deltas, columns=list(DELTAS)).pipe(with_verdicts, margins or {}, confidence),
        confidence,
    )


def comparison_markdown(comparison: Comparison) -> str:
    """comparison.md: the params and variants that differ, then the seed-paired deltas; a
    variant equal to the baseline in every metric (the experiment did not touch it) is named
    once instead of repeated."""
    deltas = comparison.deltas.copy()
    deltas["interval"] = [
        bracket(low, high, signed=True) if low == low and high == high else "n/a (1 seed)"
        for low, high in zip(deltas["low"], deltas["high"], strict=True)
    ]
    deltas = deltas.drop(columns=["low", "high", "p", "tost_low", "tost_high"])
    keys = ["experiment", "variant"]
    same = deltas.groupby(keys, sort=False)["delta"].transform(lambda d: bool((d == 0).all()))
    same = same.astype(bool)
    identical = [
        f"{name}: {', '.join(group['variant'].unique())}"
        for name, group in deltas[same].groupby("experiment", sort=False)
    ]
    deltas = deltas[~same]
    params = comparison.params
    sections = [
        "Generated by `zgain sweep-report`; do not edit.",
        f"Each experiment against the baseline `{comparison.baseline}`, at its headline rate: "
        "delta = experiment − baseline of each variant both hold, paired by seed, with its "
        f"{percent(comparison.confidence)} t-interval over the seeds (docs/usage.md#sweeps); "
        "on capture and G^marg its verdict by "
        "the report's rule (docs/method.md#verdicts: equivalence within ±δ first, then the "
        "paired t-test after Holm over one experiment × metric).",
        "Params that differ from the baseline (keys only one side has included):",
        frame_table(params) if not params.empty else "none",
        "Variants added or removed:",
        frame_table(comparison.variants),
        "Variants equal to the baseline in every metric: " + ("; ".join(identical) or "none"),
        "Deltas:",
        frame_table(deltas) if not deltas.empty else "none",
    ]
    return "\n\n".join(sections) + "\n"
