"""The seed tables of `reports/tables/`: run metrics over seeds beside their reference rows.

A long table (registry.CELLS) has one row per Markdown cell; `kind` says how the cell was made:
`seeds` (mean and t-interval over seeds, docs/method.md#uncertainty-over-seeds), `split` (a
value fixed by the test split, no interval) or `definition` (a constant); `source` names the
run metric it was read from.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from zgain.core.runs import rate_label
from zgain.results.analysis.bounds import RATIO_DENOMINATORS, clip_to_bounds
from zgain.results.load.runs import SPLIT_KEYS, EvalResults
from zgain.results.registry import CELLS, STRATEGIES
from zgain.stats.intervals import Interval, t_interval

SEEDS, SPLIT, DEFINITION = "seeds", "split", "definition"
BASE, ORACLE = "base", "oracle"
LATENT_DIM = "latent_dim"  # source of the active-units cap: cvae.common.model.latent_dim
PAIRED_MEASURES = ("marginal_gain", "z_information", "gross_gain", "capture")


@dataclass(frozen=True)
class Reference:
    """A reference row: per column, a SPLIT_KEYS metric name, LATENT_DIM, or a constant."""

    label: str
    cells: Mapping[str, str | float]


@dataclass(frozen=True)
class TableSpec:
    """One table of the summary: its columns (run metrics) and reference rows."""

    name: str  # tables/<name>.csv
    title: str
    columns: tuple[str, ...]
    note: str  # what the caption adds to the method label
    before: tuple[Reference, ...] = ()
    after: tuple[Reference, ...] = ()


DECOMPOSED = ("gross_gain", "marginal_gain", "z_information", "capture", "kl", "net_gain")
"""The decomposition's columns; the base row is 0 in each by definition."""
RECOVERED = ("probe_accuracy", "normalized_recovery", "kmeans_accuracy", "kmeans_nmi")
"""The recovery measures, each read from a sample z and (`_mean`) from E_q[z]."""
FRACTIONS = ("frac_gain_pop", "frac_gain_ex", "frac_gain_pop_tok", "frac_z_information")
"""The fractional gains; the oracle's ceiling of each is its `_ceiling` split value."""


def with_means(label: str, *sources: str | float) -> Reference:
    """A recovery reference row: the source of each RECOVERED measure, in order, also serves
    its `_mean` column."""
    pairs = zip(RECOVERED, sources, strict=True)
    return Reference(label, {c: v for m, v in pairs for c in (m, f"{m}_mean")})


DECOMPOSITION = TableSpec(
    name="decomposition",
    title="Gain decomposition (nats per sequence)",
    columns=DECOMPOSED,
    note=(
        "Per example, gross = marginal + z-information exactly: B − L = (B − M) + (M − L). "
        "`base`: the reference, the base model against itself (every entry 0 by definition). "
        "`oracle`: a latent that knows the strategy, from the run metrics' oracle fields "
        "(gross = `oracle_gross_gain`, marginal = `oracle_marginal_gain`, z-information = "
        "`oracle_info` = I*, capture 1 by definition, kl = I* (the rate of that latent with its "
        "exact posterior), net = gross − kl = `oracle_marginal_gain`)."
    ),
    before=(Reference(BASE, dict.fromkeys(DECOMPOSED, 0.0)),),
    after=(
        Reference(
            ORACLE,
            {
                "gross_gain": "oracle_gross_gain",
                "marginal_gain": "oracle_marginal_gain",
                "z_information": "oracle_info",
                "capture": 1.0,
                "kl": "oracle_info",
                "net_gain": "oracle_marginal_gain",
            },
        ),
    ),
)
FRACTIONAL = TableSpec(
    name="fractional",
    title="Fractional gains and their ceilings (shares of the base's code length)",
    columns=FRACTIONS,
    note=(
        "The `oracle` row holds the ceilings `frac_gain_pop_ceiling`, `frac_gain_ex_ceiling`, "
        "`frac_gain_pop_tok_ceiling` and `frac_z_information_ceiling`: the same shares for the "
        "oracle's strategy-informed code length C* = NLL* − I*."
    ),
    after=(Reference(ORACLE, {c: f"{c}_ceiling" for c in FRACTIONS}),),
)
RECOVERY = TableSpec(
    name="recovery",
    title="Strategy recovery beyond x (accuracies and NMI, shares)",
    columns=tuple(c for m in RECOVERED for c in (m, f"{m}_mean")),
    note=(
        "Columns without `_mean` read one sample z ~ q(z|x,y) per example (what the decoder "
        "receives), `_mean` columns read E_q[z]. `floor`: the probe on log p(s|x) alone "
        "(`probe_floor`), one KMeans cluster (`kmeans_accuracy_floor`, NMI 0). `ceiling`: the "
        "Bayes accuracy mean max_s p(s|x,y) (`probe_ceiling`) and the Bayes labels "
        "argmax_s p(s|x,y) scored like the clusters (`kmeans_accuracy_ceiling`, "
        "`kmeans_nmi_ceiling`); normalized recovery is 0 at the floor and 1 at the ceiling by "
        "definition. The KMeans floor ignores x: KMeans measures recovery, not recovery beyond x."
    ),
    before=(with_means("floor", "probe_floor", 0.0, "kmeans_accuracy_floor", 0.0),),
    after=(
        with_means(
            "ceiling", "probe_ceiling", 1.0, "kmeans_accuracy_ceiling", "kmeans_nmi_ceiling"
        ),
    ),
)
LOCALIZATION = TableSpec(
    name="localization",
    title="Localization of the z-information on the revealing positions",
    columns=("localization_share", "token_info_spearman"),
    note=(
        "`oracle`: the same share for the oracle's per-token information "
        "(`oracle_localization_share`); its rank correlation with itself is 1 by definition. "
        "`even spread`: the share of revealing positions (`revealed_token_share`), what a "
        "z-information spread evenly over the tokens would give."
    ),
    after=(
        Reference(
            ORACLE,
            {"localization_share": "oracle_localization_share", "token_info_spearman": 1.0},
        ),
        Reference("even spread", {"localization_share": "revealed_token_share"}),
    ),
)
POSTERIOR = TableSpec(
    name="posterior",
    title="Posterior usage",
    columns=("kl", "active_units", "mi_q_nats"),
    note=(
        "`oracle`: the rate of a latent that knows the strategy, I* (`oracle_info`). `cap`: the "
        "most each column can show, the latent size (`latent_dim`) for `active_units` and "
        "log N (`mi_q_cap_nats`) for `mi_q_nats`, whose every term is at most log N: a value "
        "near the cap means at least that much, not that much."
    ),
    after=(
        Reference(ORACLE, {"kl": "oracle_info"}),
        Reference("cap", {"active_units": LATENT_DIM, "mi_q_nats": "mi_q_cap_nats"}),
    ),
)
DIAGNOSTICS = TableSpec(
    name="diagnostics",
    title="Diagnostics",
    columns=("z_reliance", "prior_sample_gain", "z_information_se", "iw_samples"),
    note=(
        "`z_information_se` is the standard error of one run's `z_information` over its test "
        "examples (averaged over seeds): when it is small beside the seed spread of "
        "`z_information` in the decomposition table, training variation, not the test sample, "
        "dominates the uncertainty. `iw_samples` is a setting, the same in every run."
    ),
)
SEED_TABLES = (DECOMPOSITION, FRACTIONAL, RECOVERY, LOCALIZATION, POSTERIOR, DIAGNOSTICS)
"""The summary's tables over seeds, in report order."""


DECOMPOSITION_PREFIX = f"{DECOMPOSITION.name}_rate"
"""The per-rate decomposition tables are named DECOMPOSITION_PREFIX + the rate's label."""


def decomposition_name(rate: float) -> str:
    return f"{DECOMPOSITION_PREFIX}{rate_label(rate)}"


def cell(label: str, metric: str, stats: Interval, kind: str, source: str) -> tuple:
    """One row of a long seed table, in registry.CELLS order."""
    return (label, metric, *stats.row().values(), kind, source)


def reference_cells(reference: Reference, results: EvalResults, latent_dim: int) -> list[tuple]:
    """The cells of one reference row: split values, the latent size, or constants."""
    rows, n_runs = [], len(results.runs)
    for metric, source in reference.cells.items():
        if isinstance(source, float):
            stats, kind, name = Interval.point(source, 0), DEFINITION, DEFINITION
        elif source == LATENT_DIM:
            stats, kind, name = (
                Interval.point(float(latent_dim), 0),
                DEFINITION,
                source,
            )
        else:
            value = results.split_value(source)
            stats, kind, name = Interval.point(value, n_runs), SPLIT, source
        rows.append(cell(reference.label, metric, stats, kind, name))
    return rows


def variant_cells(
    results: EvalResults,
    variant: str,
    metric: str,
    confidence: float,
    latent_dim: int | None = None,
) -> tuple:
    """Mean and t-interval over seeds, kept inside the metric's range (analysis.bounds); a
    SPLIT_KEYS metric is the common value, no interval. A ratio whose denominator's interval
    holds 0 is n/a (NaN, source `n/a: <denominator> interval holds 0`)."""
    values = results.values(variant, metric)
    if metric in SPLIT_KEYS:
        stats = Interval.point(results.split_value(metric), len(values))
        return cell(variant, metric, stats, SPLIT, metric)
    denominator = RATIO_DENOMINATORS.get(metric)
    if denominator is not None:
        below = t_interval(results.values(variant, denominator), confidence)
        if below.has_interval and below.low <= 0.0 <= below.high:
            stats = Interval(math.nan, math.nan, math.nan, below.n)
            return cell(variant, metric, stats, SEEDS, f"n/a: {denominator} interval holds 0")
    stats = clip_to_bounds(t_interval(values, confidence), metric, latent_dim)
    return cell(variant, metric, stats, SEEDS, metric)


def seed_table(
    spec: TableSpec, results: EvalResults, confidence: float, latent_dim: int
) -> pd.DataFrame:
    """One table of SEED_TABLES: reference rows before, the variants, reference rows after."""
    rows = []
    for reference in spec.before:
        rows += reference_cells(reference, results, latent_dim)
    for variant in results.variants:
        rows += [variant_cells(results, variant, m, confidence, latent_dim) for m in spec.columns]
    for reference in spec.after:
        rows += reference_cells(reference, results, latent_dim)
    return pd.DataFrame(rows, columns=list(CELLS))


def seed_cells(
    per_seed: pd.DataFrame,
    variants: Sequence[str],
    key: str,
    label: Callable[[int], str],
    source: str,
    confidence: float,
) -> list[tuple]:
    """Per variant and `key` value (sorted), the t-interval over seeds of the per-seed `value`s,
    as cells labelled label(key value)."""
    rows = []
    for variant in variants:
        runs = per_seed[per_seed["variant"] == variant]
        for at, group in runs.groupby(key, sort=True):
            stats = t_interval(group["value"].to_numpy(), confidence)
            rows.append(cell(variant, label(at), stats, SEEDS, source))
    return rows


def information_by_position(
    results: EvalResults, confidence: float, oracle: bool = True
) -> pd.DataFrame:
    """Mean per-token z-information i^θ_t (nats) by target position, per variant and the oracle.

    A variant's mean pools its seeds (every seed scores the same examples, so this is the mean
    of the per-seed position means) with a t-interval over those per-seed means; the oracle's
    i*_t is the same in every run, so it has no interval (no oracle rows when `oracle` is
    False: data without a per-token oracle). Columns: registry.CELLS.
    """
    pos = results.positions[results.positions["n_tokens"] > 0]
    seeds = pos.assign(value=pos["z_information_sum"] / pos["n_tokens"])
    rows = seed_cells(seeds, results.variants, "position", str, "token_z_information", confidence)
    by_position = pos.groupby("position", sort=True)[["oracle_info_sum", "n_tokens"]].sum()
    for position, row in by_position.iterrows() if oracle else ():
        stats = Interval.point(row["oracle_info_sum"] / row["n_tokens"], len(pos))
        rows.append(cell(ORACLE, str(position), stats, SPLIT, "oracle_token_info"))
    table = pd.DataFrame(rows, columns=list(CELLS)).rename(columns={"metric": "position"})
    table["position"] = table["position"].astype(int)
    return table


def information_by_strategy(
    results: EvalResults, transforms: tuple[str, ...], confidence: float
) -> pd.DataFrame:
    """Mean z-information I^θ (nats/seq) over the test examples of each hidden strategy, per
    variant, beside the oracle's I* on the same examples.

    A variant's cell is the mean over seeds of the per-seed strategy means, with a t-interval
    over seeds; the oracle's I* is the same in every run, so it has no interval. `metric` is the
    strategy's name (data.transforms order). Columns: registry.CELLS.
    """
    names = dict(enumerate(transforms))
    by = results.strategies.assign(
        value=results.strategies["z_information_sum"] / results.strategies["n_examples"]
    )
    rows = seed_cells(by, results.variants, "strategy", names.get, "z_information", confidence)
    first = by[(by["variant"] == results.variants[0]) & (by["seed"] == results.seeds[0])]
    for row in first.itertuples():
        mean = row.oracle_info_sum / row.n_examples
        stats = Interval.point(mean, int(row.n_examples))
        rows.append(cell(ORACLE, names[row.strategy], stats, SPLIT, "oracle_info"))
    return STRATEGIES.frame(rows)


def information_by_position_plot(by_position: pd.DataFrame) -> pd.DataFrame:
    """dvc plot data: position, series (a variant, or `oracle`), z_information (nats); the
    `series` template colours one line per series."""
    return by_position.rename(columns={"mean": "z_information", "variant": "series"})[
        ["position", "series", "z_information"]
    ].reset_index(drop=True)
