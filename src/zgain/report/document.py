"""The report: `build_report` computes every table, figure and metric in memory from the runs'
evaluation outputs, then lays out the Markdown summary and its views (zgain.report.layout);
`write_report` writes them under `reports_dir`: tables and plots as CSV, figures as PNG,
summary.md, details.md and diagnostics.md, reports/metrics.json (the headline means per variant)
and reports/capture.json (the compact view of them that `dvc metrics show` and `dvc exp show`
read). Every number in the Markdown comes from a table also written as CSV.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure

from zgain.core.io import atomic_dir, atomic_path, write_json
from zgain.core.runs import Run
from zgain.cvae.terms import terms_used
from zgain.figures.draw import learning_figure, save_png
from zgain.figures.forest import forest_figures
from zgain.params import Params
from zgain.report.context import Context, Coverage
from zgain.report.figures import build_figures
from zgain.report.layout import SUMMARY_FILE, render_documents
from zgain.report.sections.checks import (
    FIGURES_DIR,
)
from zgain.report.sections.seeds import glossary_names
from zgain.results.analysis.adjust import (
    ADJUSTED_METRICS,
    adjust_results,
    adjustment_table,
    with_adjusted,
)
from zgain.results.analysis.controller import ControllerEnd, beta_bounds, rate_check
from zgain.results.analysis.plateau import (
    LEARNING_CONFIRMING_FIGURE,
    LEARNING_FIGURE,
    QUANTITY,
    tier_plateau,
)
from zgain.results.analysis.procedure import PROCEDURE_METRICS, procedure_tables
from zgain.results.analysis.tables import (
    DECOMPOSITION,
    decomposition_name,
    information_by_position,
    information_by_position_plot,
    information_by_strategy,
    seed_table,
)
from zgain.results.analysis.verdicts import half_width_table, verdict_table
from zgain.results.frontier import (
    frontier_plot,
    frontier_table,
    headline_rate,
    identical_runs,
    top_group,
    twin_check,
    twin_variants,
)
from zgain.results.load.bases import BaseRuns
from zgain.results.load.runs import EvalResults, per_run
from zgain.results.registry import (
    ADJUSTMENT,
    BASES,
    FOLDER,
    FRONTIER,
    HALF_WIDTHS,
    PLATEAU,
    PLATEAU_CONFIRMING,
    POSITIONS,
    PROCEDURE,
    RATE_CHECK,
    RUNS,
    STRATEGIES,
    TWINS,
    VERDICTS,
)
from zgain.stats.intervals import finite_mean

METRICS_FILE, CAPTURE_FILE = "metrics.json", "capture.json"  # capture.json: the DVC metric
PLOTS_DIR = "plots"
SUMMARY_METRICS = ("marginal_gain", "z_information", "capture", "kl", "normalized_recovery")
CAPTURE_DIGITS = 4
DELTA_KEYS = {"capture": "dc", "marginal_gain": "dg"}
"""capture.json's keys of the claims over bases: `<key>_<variant>`, the variant's mean difference
from the baseline over the confirming bases at C."""
VERDICT_KEY = "v"
"""capture.json's `v_<variant>`: the verdicts on capture and G^marg, as `<capture>/<G^marg>`."""
VERDICT_MARKS = {"better": "+", "worse": "-", "equivalent": "=", "undetermined": "?"}


@dataclass(frozen=True)
class Report:
    """Everything `reports/` holds, by file name relative to its folder."""

    tables: dict[str, pd.DataFrame]  # tables/<name>.csv
    plots: dict[str, pd.DataFrame]  # plots/<name>.csv: dvc plots data
    figures: dict[str, Figure]  # figures/<name>.png
    metrics: dict  # metrics.json: {"headline_rate": C, "variants": {...}} at the headline rate
    summary: str  # summary.md
    views: dict[str, str]  # details.md, diagnostics.md: the tables the summary links to


def build_report(
    by_rate: Mapping[float, EvalResults],
    params: Params,
    controller: Mapping[Run, ControllerEnd],
    curves: Mapping[str, pd.DataFrame] | None = None,
    bases: Sequence[BaseRuns] = (),
    confirming: pd.DataFrame | None = None,
) -> Report:
    """Every table, figure and metric of `reports/` for the listed runs at every target rate.

    by_rate maps each target rate (params order) to its runs; controller holds the rate
    controller's end state of every run with a target (zgain.results.analysis.controller); curves
    holds the learning-curve plot tables by quantity (zgain.results.curves), written as
    plots/learning_<quantity>.csv; bases, every base's runs of the contested variants;
    confirming, the confirming runs' validation I^θ curves when they train their own
    cvae.confirm.steps (zgain.results.curves.confirming_curves), read by the plateau rule.
    """
    first = next(iter(by_rate.values()))
    coverage = Coverage.of(params, first)
    headline = headline_rate(list(by_rate), first.split_value("oracle_info"))
    tables: dict[str, pd.DataFrame] = {}
    ctx = Context(params, by_rate, headline, tables, coverage, bases)
    results, settings = ctx.results, ctx.settings
    confidence = settings.confidence
    latent_dim = params.cvae.common.model.latent_dim
    for spec in coverage.seed_tables():
        tables[spec.name] = seed_table(spec, results, confidence, latent_dim)
    for rate, at in by_rate.items():
        name = decomposition_name(rate)
        tables[name] = seed_table(coverage.decomposition, at, confidence, latent_dim)
    adjusted = adjust_results(by_rate, coverage.metrics(ADJUSTED_METRICS))
    adjustment = tables[ADJUSTMENT.name] = adjustment_table(adjusted, confidence)
    names = {decomposition_name(rate): rate for rate in by_rate} | {DECOMPOSITION.name: headline}
    for name, rate in names.items():
        tables[name] = with_adjusted(tables[name], adjustment, rate)
    deltas, rank = settings.deltas, coverage.rank_metric
    tables[VERDICTS.name] = verdict_table(
        adjusted, results.variants, settings.baseline, settings.pairs, deltas,
        coverage.verdict_metrics, confidence,
    )  # fmt: skip
    tables[HALF_WIDTHS.name] = half_width_table(
        adjusted, results.variants, headline, deltas[rank], confidence, rank
    )
    tables[POSITIONS.name] = information_by_position(results, confidence, coverage.token_oracle)
    if coverage.strategies:
        tables[STRATEGIES.name] = information_by_strategy(results, coverage.strategies, confidence)
    tables |= procedure_tables(
        bases, params, settings, adjusted, coverage.metrics(PROCEDURE_METRICS)
    )
    tables[RUNS.name] = per_run(by_rate, glossary_names())
    tables[RATE_CHECK.name] = rate_check(by_rate, controller, beta_bounds(params))
    tables[FRONTIER.name] = frontier_table(by_rate, confidence)
    if (pair := twin_variants(ctx.weights)) is not None:
        tables[TWINS.name] = twin_check(by_rate, pair, confidence)
    plots = {"frontier": frontier_plot(tables[FRONTIER.name])}
    plots["information_by_position"] = information_by_position_plot(tables[POSITIONS.name])
    plots |= {f"learning_{quantity}": table for quantity, table in (curves or {}).items()}
    additive = [v for v, w in ctx.weights.items() if len(terms_used(w)) > 1]
    top = top_group(adjustment, headline, rank, params.report.equivalence)
    forests = forest_figures(tables[VERDICTS.name], rank, tables.get(PROCEDURE.name), deltas)
    same_as = identical_runs(by_rate)
    figures = build_figures(ctx, forests, top, additive, same_as)
    oracle_info, common = results.split_value("oracle_info"), params.cvae.common
    if curves and QUANTITY in curves:
        curve, variants = curves[QUANTITY], results.variants
        tables[PLATEAU.name] = tier_plateau(curve, common, variants, oracle_info, top, confidence)
        figure = learning_figure(
            curve, common, variants, oracle_info, headline, additive, same_as=same_as
        )
        figures[LEARNING_FIGURE] = figure
    if confirming is not None:
        confirm = params.cvae.tier_common(confirming=True), params.cvae.confirm.variants
        tables[PLATEAU_CONFIRMING.name] = tier_plateau(
            confirming, *confirm, oracle_info, top, confidence
        )
        figures[LEARNING_CONFIRMING_FIGURE] = learning_figure(
            confirming, *confirm, oracle_info, headline, additive, over="replicates",
            tier="Confirming tier: ",
        )  # fmt: skip
    procedure, baseline = tables.get(PROCEDURE.name), settings.baseline
    metrics = metrics_summary(
        results, headline, adjustment, procedure, baseline, tables.get(BASES.name)
    )
    ctx = replace(ctx, figures=tuple(figures), identical=same_as)
    documents = render_documents(ctx)
    summary = documents.pop(SUMMARY_FILE)
    return Report(tables, plots, figures, metrics, summary, documents)


def json_number(value: float) -> float | None:
    """A float for JSON, None for NaN (JSON has no NaN)."""
    return float(value) if math.isfinite(value) else None


def metrics_summary(
    results: EvalResults,
    headline_rate: float,
    adjustment: pd.DataFrame,
    procedure: pd.DataFrame | None = None,
    baseline: str = "",
    bases: pd.DataFrame | None = None,
) -> dict:
    """reports/metrics.json: the headline rate C, the oracle's I*, each variant's seed means of
    SUMMARY_METRICS at C (`variants`, each run at the KL it reached) and its ADJUSTED metrics
    moved to exactly C (`adjusted_to_C`, the screening values); with the `procedure` table, each
    variant's mean difference from `baseline` over the confirming bases at C (`over_bases`, the
    claims the Findings open with), its verdict there (`verdicts_over_bases`) and each contested
    variant's capture at C averaged over the confirming bases (`capture_over_bases`, from
    `bases`); null for NaN."""
    variants = {
        variant: {m: json_number(finite_mean(results.values(variant, m))) for m in SUMMARY_METRICS}
        for variant in results.variants
    }
    summary = {
        "headline_rate": headline_rate,
        "oracle_info": json_number(results.split_value("oracle_info")),
        "variants": variants,
        "adjusted_to_C": means_by(adjustment[adjustment["rate"] == headline_rate], "variant"),
    }
    if procedure is not None and len(procedure):
        at = procedure[(procedure["b"] == baseline) & (procedure["rate"] == headline_rate)]
        summary["over_bases"] = means_by(at, "a")
        verdicts: dict[str, dict[str, str]] = {}
        for name, metric, verdict in zip(at["a"], at["metric"], at["verdict"], strict=True):
            verdicts.setdefault(name, {})[metric] = str(verdict)
        summary["verdicts_over_bases"] = verdicts
    if bases is not None and len(bases):
        rows = bases[(bases["tier"] == "confirming") & (bases["rate"] == headline_rate)]
        contested = [c for c in bases.columns if c in results.variants]
        if len(rows):  # a study with confirming bases
            summary["capture_over_bases"] = {
                name: json_number(float(rows[name].mean())) for name in contested
            }
    return summary


def means_by(rows: pd.DataFrame, key: str) -> dict[str, dict[str, float | None]]:
    """{row[key]: {row.metric: row.mean}} over `rows` in their order, null for NaN."""
    nested: dict[str, dict[str, float | None]] = {}
    for name, metric, mean in zip(rows[key], rows["metric"], rows["mean"], strict=True):
        nested.setdefault(name, {})[metric] = json_number(float(mean))
    return nested


def capture_view(metrics: dict) -> dict:
    """reports/capture.json, the file `dvc metrics show` and `dvc exp show` read: the claims over
    the confirming bases the Findings open with, at the headline rate C (metrics.json's
    `headline_rate`): each contested variant's capture at C averaged over the confirming bases
    (its name); each contested comparison's Δ
    capture and Δ G^marg from the baseline (DELTA_KEYS) and its verdicts (`v_<variant>`,
    VERDICT_MARKS for capture / G^marg). Rounded to CAPTURE_DIGITS, null where undefined. The
    screening base's values stay in metrics.json (`adjusted_to_C`), apart from the claims."""
    view: dict[str, float | str | None] = {}
    for name, value in metrics.get("capture_over_bases", {}).items():
        view[name] = rounded(value)
    verdicts = metrics.get("verdicts_over_bases", {})
    for name, means in metrics.get("over_bases", {}).items():
        for metric, key in DELTA_KEYS.items():
            view[f"{key}_{name}"] = rounded(means.get(metric))
        marks = [VERDICT_MARKS.get(verdicts.get(name, {}).get(m, ""), "") for m in DELTA_KEYS]
        view[f"{VERDICT_KEY}_{name}"] = "/".join(marks)
    return view


def rounded(value: float | None) -> float | None:
    return None if value is None else round(value, CAPTURE_DIGITS)


def write_files(root: Path, files: Mapping[str, str | pd.DataFrame | Figure]) -> None:
    """Each file under `root`, atomically: text, a table as CSV, a figure as PNG."""
    for name, content in files.items():
        if isinstance(content, Figure):
            save_png(content, root / name)
            continue
        with atomic_path(root / name) as tmp:
            if isinstance(content, pd.DataFrame):
                content.to_csv(tmp, index=False)
            else:
                tmp.write_text(content)


def write_report(report: Report, reports_dir: str | Path) -> None:
    """Write every file of `report` in a temporary directory, then swap it into `reports_dir`
    whole: the previous report stays until the new one is complete, and no file an older report
    wrote in tables/, plots/ or figures/ survives."""
    with atomic_dir(reports_dir) as root:
        for folder in (FOLDER, PLOTS_DIR, FIGURES_DIR):
            (root / folder).mkdir()
        files = {f"{FOLDER}/{name}.csv": table for name, table in report.tables.items()}
        files |= {f"{PLOTS_DIR}/{name}.csv": table for name, table in report.plots.items()}
        files |= {f"{FIGURES_DIR}/{name}": figure for name, figure in report.figures.items()}
        write_files(root, files | {SUMMARY_FILE: report.summary} | report.views)
        write_json(report.metrics, root / METRICS_FILE)
        write_json(capture_view(report.metrics), root / CAPTURE_FILE)
