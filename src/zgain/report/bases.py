"""The procedure's replicates: every base's runs of the contested variants, and the comparisons
whose intervals are over bases (docs/method.md#claims-about-the-procedure).

The screening tier (every variant and rate on the first base, `cvae.seeds`) gives the report's
seed-level tables and verdicts, which are conditional on that base. The confirming tier (the
variants of `cvae.confirm` at its rates on every other base, `cvae.confirm.seeds`) together with
the screening base's runs of those variants gives one value per (base, seed) replicate; each is
moved to exactly C along the screening base's frontier slope (zgain.report.adjust), a run more
than RATE_TOLERANCE off its target being left out, so no value moves by more than that share of
C. Differences a − b pair the runs of one replicate; their interval is over the per-base means
(zgain.report.procedure).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from zgain.core.errors import DataError
from zgain.core.io import read_json
from zgain.params import Params
from zgain.report.adjust import Adjusted, adjust_to_rate, runs_off
from zgain.report.controller import RATE_TOLERANCE
from zgain.report.loading import EvalResults, load_results
from zgain.report.markdown import (
    LABELS,
    MARKS,
    NOT_SEPARABLE,
    fmt,
    fmt_stats,
    frame_table,
    markdown_table,
    percent,
    sigma_cells,
)
from zgain.report.mismatch import base_mismatch, mismatch_rows, mismatch_table
from zgain.report.procedure import (
    detectable_difference,
    procedure_interval,
)
from zgain.report.registry import BASES, MISMATCH, PROCEDURE
from zgain.report.statistics import (
    BETTER,
    EQUIVALENT,
    POWER,
    UNDETERMINED,
    WORSE,
    Evidence,
    decide,
    mean_se,
)

PROCEDURE_METRICS = ("capture", "marginal_gain")
"""The metrics compared over bases: the verdict table's two."""
SCREENING, CONFIRMING = "screening", "confirming"


@dataclass(frozen=True)
class BaseRuns:
    """One base: its tier, checkpoint sha256, test excess over the oracle (nats/seq) and its
    runs of the contested variants at each confirming rate."""

    seed: int
    tier: str
    sha256: str
    test_excess: float
    results: Mapping[float, EvalResults]
    mismatch: pd.DataFrame  # zgain.report.mismatch.base_mismatch: b_t beside b*_t by position

    def values(self, variant: str, rate: float, metric: str, slope: float) -> pd.DataFrame:
        """(base, seed, value): the replicates' `metric` moved to exactly `rate` along `slope`
        (NaN for a run off its target)."""
        at = self.results[rate]
        moved = adjust_to_rate(at.values(variant, metric), at.values(variant, "kl"), rate, slope)
        value = np.where(runs_off(at, variant), math.nan, moved)
        return pd.DataFrame({"base": self.seed, "seed": list(at.seeds), "value": value})

    def n_off(self, variants: Sequence[str], rate: float) -> int:
        return sum(int(runs_off(self.results[rate], v).sum()) for v in variants)


def base_facts(meta_path: str | Path, base: int) -> tuple[str, float]:
    """(sha256, test excess in nats/seq; NaN without an oracle) from base `base`'s base.json."""
    path = Path(meta_path)
    if not path.is_file():
        raise DataError(f"{path} not found: run `dvc repro train_base@{base}`")
    meta = read_json(path)
    excess = meta.get("metrics", {}).get("test_excess_nats")
    return str(meta["sha256"]), math.nan if excess is None else float(excess)


def load_bases(params: Params) -> list[BaseRuns]:
    """Every base's runs of `cvae.confirm.variants` at `cvae.confirm.rates`, in base.seeds
    order: the screening base's from its screening groups, the others' from their confirming
    groups."""
    confirm, screening = params.cvae.confirm, params.base.screening
    out = []
    for seed in params.base.seeds:
        sha, excess = base_facts(params.paths.base(seed).base_meta, seed)
        first = seed == screening
        seeds = params.cvae.seeds if first else confirm.seeds
        results = {
            rate: load_results(
                params.paths.eval_dir,
                confirm.variants,
                seeds,
                rate,
                base=seed,
                confirming=not first,
            )
            for rate in confirm.rates
        }
        tier = SCREENING if first else CONFIRMING
        mismatch = base_mismatch(params.paths.base(seed).surprisal_dir, seed)
        out.append(BaseRuns(seed, tier, sha, excess, results, mismatch))
    return out


def replicates(bases: Sequence[BaseRuns]) -> list[BaseRuns]:
    """The bases the claims over bases rest on: the confirming ones. The screening base chose
    the contested group and gives the exact-rate slopes, so it is not a replicate of the claims
    it shaped (docs/method.md#claims-about-the-procedure); tables/bases.csv still lists it."""
    return [base for base in bases if base.tier == CONFIRMING]


def comparisons(params: Params) -> list[tuple[str, str]]:
    """The comparisons over bases: each contested variant − the baseline, then the declared
    pairs whose two variants are both contested."""
    confirm, baseline = params.cvae.confirm.variants, params.report.baseline_variant
    pairs = [(v, baseline) for v in confirm if v != baseline and baseline in confirm]
    return pairs + [(a, b) for a, b in params.report.pairs if a in confirm and b in confirm]


def procedure_table(
    bases: Sequence[BaseRuns],
    pairs: Sequence[tuple[str, str]],
    adjusted: Adjusted,
    confidence: float,
    deltas: Mapping[str, float],
    metrics: Sequence[str] = PROCEDURE_METRICS,
) -> pd.DataFrame:
    """tables/procedure.csv: per comparison a − b, rate and metric, the mean over bases of the
    per-base mean difference with its t-interval over bases (n = bases), the replicates used,
    σ_B and σ_W of the difference with their upper bounds at `confidence`, the smallest |Δ|
    this design detects at POWER at the estimated σ and at σ_B's bound (the spread of the
    per-base means), the runs left out as off their target, and the verdict of the report's one
    rule over bases (zgain.report.statistics.decide: the per-base means as the n replicates,
    Holm over the comparisons of one rate and metric, equivalence margin `deltas[metric]`)."""
    rows = []
    rates = list(bases[0].results) if bases else []
    for rate in rates:
        for metric in metrics:
            family = []
            for a, b in pairs:
                diffs = []
                for base in bases:
                    va = base.values(a, rate, metric, adjusted.slopes[(a, rate, metric)])
                    vb = base.values(b, rate, metric, adjusted.slopes[(b, rate, metric)])
                    diffs.append(va.assign(value=va["value"] - vb["value"]))
                result = procedure_interval(pd.concat(diffs, ignore_index=True), confidence)
                family.append((a, b, result))
            evidence = [
                Evidence.of_se(*mean_se(np.array(list(r.per_base.values()))), confidence)
                for _, _, r in family
            ]
            decided = decide(evidence, deltas[metric], confidence)
            for (a, b, result), e, (p_holm, verdict) in zip(family, evidence, decided, strict=True):
                parts = result.components
                n = result.interval.n
                k = result.n_replicates / n if n else math.nan
                detectable = (math.nan, math.nan)
                if n >= 2:  # the smallest |Δ| at the estimated σ and at σ_B's bound
                    detectable = (
                        detectable_difference(parts.sigma_b, parts.sigma_w, n, k, confidence),
                        detectable_difference(parts.sigma_b_upper, 0.0, n, k, confidence),
                    )
                rows.append(
                    (a, b, rate, metric, *result.interval.row().values(), result.n_replicates)
                    + (parts.sigma_b, parts.sigma_b_upper, parts.sigma_w, parts.sigma_w_upper)
                    + detectable
                    + (sum(base.n_off((a, b), rate) for base in bases), e.tost_low, e.tost_high)
                    + (e.p, p_holm, verdict)
                )
    return PROCEDURE.frame(rows)


def procedure_tables(
    bases: Sequence[BaseRuns], params: Params, adjusted: Adjusted, metrics: Sequence[str]
) -> dict[str, pd.DataFrame]:
    """tables/procedure.csv and tables/bases.csv on `metrics` (those the data allows: capture
    needs the oracle); none without bases."""
    if not bases:
        return {}
    confidence = params.report.confidence
    deltas = params.report.equivalence.model_dump()
    table = procedure_table(
        replicates(bases), comparisons(params), adjusted, confidence, deltas, metrics
    )
    facts = bases_table(bases, params.cvae.confirm.variants, adjusted, metrics[0])
    mismatch = mismatch_table([base.mismatch for base in bases])
    return {PROCEDURE.name: table, BASES.name: facts, MISMATCH.name: mismatch}


def bases_table(
    bases: Sequence[BaseRuns], variants: Sequence[str], adjusted: Adjusted, metric: str
) -> pd.DataFrame:
    """tables/bases.csv: per base, its tier, sha256, test excess and replicates, and each
    contested variant's mean `metric` (moved to exactly C; off-target runs left out) per rate."""
    rows = []
    for base in bases:
        for rate, at in base.results.items():
            row = {
                "base": base.seed,
                "tier": base.tier,
                "sha256": base.sha256,
                "test_excess_nats": base.test_excess,
                "rate": rate,
                "seeds": len(at.seeds),
            }
            for v in variants:
                values = base.values(v, rate, metric, adjusted.slopes[(v, rate, metric)])
                finite = values["value"].dropna()
                row[v] = float(finite.mean()) if len(finite) else math.nan
            rows.append(row)
    return pd.DataFrame(rows)


def _replicates(bases: Sequence[BaseRuns]) -> str:
    """`base 0 × 2 seeds; bases 1, 2, 3, 4 × 1 seed`: each tier's bases and seeds per base."""
    tiers = {}
    for base in bases:
        n = len(next(iter(base.results.values())).seeds)
        tiers.setdefault(base.tier, []).append((base.seed, n))
    parts = []
    for members in tiers.values():
        seeds = sorted({n for _, n in members})
        k = "/".join(map(str, seeds))
        names = ", ".join(str(s) for s, _ in members)
        parts.append(f"base{'s' if len(members) > 1 else ''} {names} × {k} seed{'s' * (k != '1')}")
    return "; ".join(parts)


def procedure_sentence(
    table: pd.DataFrame, bases: Sequence[BaseRuns], rate: float, confidence: float
) -> str:
    """The Findings' paragraph on the procedure: what the comparisons over bases at `rate`
    say against the first comparison's baseline, per metric (how many above it, and the count
    of each verdict), and the smallest difference the design detects; the values are in
    `procedure_findings_table`."""
    screening = [str(base.seed) for base in bases if base.tier == SCREENING]
    bases = replicates(bases)
    at = table[table["rate"] == rate]
    if at.empty or len(bases) < 2:
        return ""
    baseline = at["b"].iloc[0]
    said = []
    for metric in PROCEDURE_METRICS:
        ours = at[(at["b"] == baseline) & (at["metric"] == metric)]
        counts = ours["verdict"].value_counts()
        above = ours[ours["verdict"] == BETTER]["a"].tolist()
        head = f"{', '.join(above)} above {baseline}" if above else f"none above {baseline}"
        tally = ", ".join(
            f"{counts.get(v, 0)} {v}" for v in (WORSE, EQUIVALENT, UNDETERMINED) if counts.get(v)
        )
        said.append(f"{head} on {LABELS[metric]} ({tally})")
    capture = at[at["metric"] == PROCEDURE_METRICS[0]]
    detectable = fmt(float(capture["detectable"].median()))
    bound = fmt(float(capture["detectable_upper"].median()))
    return (
        f"**Over bases** ({len(bases)}: {_replicates(bases)}; the screening base "
        f"{', '.join(screening)}, which chose the contested group, is not a replicate), "
        f"a − b at C = {rate!r}, "
        f"{percent(confidence)} t over bases, the rule's verdict: {'; '.join(said)}. Δ capture "
        f"detectable at {percent(POWER)} power: {detectable} at the estimated σ, {bound} at the "
        f"upper bound on the spread of the per-base means ([all](tables/{PROCEDURE.name}.csv))."
    )


def procedure_findings_table(table: pd.DataFrame, rate: float) -> str:
    """The Findings' table over bases at `rate`: per comparison Δ capture and Δ G^marg with
    their intervals and verdict symbols, and σ_B, σ_W of Δ capture."""
    at = table[table["rate"] == rate].set_index(["a", "b", "metric"])
    rows = []
    for a, b in dict.fromkeys(zip(table["a"], table["b"], strict=True)):
        cells = [f"{a} − {b}"]
        for metric in PROCEDURE_METRICS:
            r = at.loc[(a, b, metric)] if (a, b, metric) in at.index else None
            cells.append(
                "n/a" if r is None else f"{fmt_stats(r, signed=True)} {MARKS[r['verdict']]}"
            )
        key = (a, b, PROCEDURE_METRICS[0])
        r = at.loc[key] if key in at.index else None
        pair = sigma_cells(r) if r is not None else ("n/a", "n/a")
        separable = pair[0] != NOT_SEPARABLE
        sigmas = ", ".join(pair) if separable else NOT_SEPARABLE
        rows.append([*cells, sigmas])
    header = ["a − b", *(f"Δ {LABELS[m]}" for m in PROCEDURE_METRICS), "σ_B, σ_W"]
    return markdown_table(header, rows)


def procedure_section(
    tables: Mapping[str, pd.DataFrame], numbers: Iterator[int], confidence: float
) -> list[str]:
    """The summary's section on the procedure: the next tables, every comparison over bases
    (tables/procedure.csv), every base (tables/bases.csv) and the mismatch by position."""
    table, bases_frame = tables[PROCEDURE.name], tables[BASES.name]
    sigmas = [sigma_cells(row) for _, row in table.iterrows()]
    hidden = ["replicates", "tost_low", "tost_high", "p", "sigma_b_upper", "sigma_w_upper"]
    shown = (
        table.assign(sigma_b=[b for b, _ in sigmas], sigma_w=[w for _, w in sigmas])
        .drop(columns=hidden)
        .rename(columns={"n": "bases", "detectable": f"detectable at {percent(POWER)}"})
        .rename(columns={"detectable_upper": "at σ bound"})
    )
    level = percent(confidence)
    facts = bases_frame.assign(sha256=bases_frame["sha256"].str[:12])
    return [
        "## Over bases: claims about the procedure",
        "",
        f"*Table {next(numbers)}. a − b per replicate (base, seed), moved to exactly C along the "
        f"screening base's frontier slope, runs >{RATE_TOLERANCE:.0%} off C left out; mean of "
        f"the per-base means with a {level} t-interval over bases (b − 1 df); σ_B, σ_W by the "
        f"method of moments, each with its one-sided {level} upper bound (≤; a σ_B clipped at "
        f"0 shows as 0; {NOT_SEPARABLE}: one seed per base, σ_B and σ_W not told apart); "
        f"detectable at {percent(POWER)} at the estimated σ, and at σ_B's bound (the spread of "
        "the per-base means); the verdict by the report's one rule with the per-base means as "
        "replicates, Holm over each rate and metric "
        "([method](../docs/method.md#claims-about-the-procedure)).*",
        "",
        frame_table(shown),
        "",
        f"*Table {next(numbers)}. Every base: its tier, checkpoint sha256 (first 12 hex), test "
        "excess over the oracle (nats/seq), and each contested variant's mean capture (G^marg "
        "without an oracle) at C.*",
        "",
        frame_table(facts),
        "",
        *mismatch_section(tables[MISMATCH.name], numbers),
    ]


def mismatch_section(table: pd.DataFrame, numbers: Iterator[int]) -> list[str]:
    """The next table: the oracle's b*_t and each base's mean b_t − b*_t by position
    (tables/mismatch.csv); nothing without a per-token oracle."""
    if table.empty:
        return []
    header, rows = mismatch_rows(table)
    return [
        f"*Table {next(numbers)}. Where each base departs from the oracle: mean b*_t and each "
        "base's mean b_t − b*_t (nats) by target position on the test split "
        "([mismatch](../docs/method.md#mismatch), tables/mismatch.csv).*",
        "",
        markdown_table(header, rows),
        "",
    ]
