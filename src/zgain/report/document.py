"""The report: tables, figures and metrics from evaluation outputs, and the Markdown
summary that presents them with a generated commentary.

`build_report` computes everything in memory from `zgain.report_tables.EvalResults`;
`write_report` puts it under `reports_dir`, each file atomically. No number in the summary is
typed by hand: each comes from a table that is also written as CSV.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure

from zgain.core.io import atomic_path, write_json
from zgain.params import Params
from zgain.report.figures import build_figures, save_png
from zgain.report.tables import (
    METRIC_GROUPS,
    ORACLE,
    OVER_SEEDS,
    EvalResults,
    anchor_table,
    gain_by_position,
    metrics_summary,
    mi_cap,
    oracle_gain_rows,
    paired_table,
    rate_gain,
    seed_table,
)

SUMMARY_FILE = "summary.md"
METRICS_FILE = "metrics.json"
TABLES_DIR, FIGURES_DIR, PLOTS_DIR = "tables", "figures", "plots"
PAIRED_TABLE = "paired_wilcoxon"
ANCHOR_TABLE = "anchors"
NA = "n/a"  # a metric that is undefined (null) for every run
NOT_APPLICABLE = "—"  # a metric that an anchor row does not have
DIGITS = 3

GROUP_TITLES = {
    "gains": "Gains (nats per sequence) and fractional gains",
    "posterior": "Posterior usage",
    "recovery": "Strategy recovery and localization",
    "per_token": "Per token and in bits",
}
GROUP_NOTES = {
    "gains": (
        "G_z (`gain_z_nats_seq`) = mean(L_shuffled − L_post) is the gain z carries beyond the "
        "fine-tuned decoder; gross = mean(B − L_post); net = gross − KL (bits-back); iw = "
        "mean(B + log p̂_K). `frac_gain_pop` = 1 − ΣL/ΣB, `frac_gain_ex` = mean(1 − L_i/B_i); "
        "`capture_ratio` = G_z / mean I*. The oracle row is a latent that knows the strategy: "
        "its G_z is I* (CI over test examples) and its capture ratio is 1 by definition."
    ),
    "per_token": "`_tok` = Σ_i gain_i / Σ_i T_i (ratio of means); bits = nats / log 2.",
}
WINNER_NOTE = (
    "G_z compares the posterior z with another example's z; when the decoder has learned to rely "
    "on z, a wrong z costs more than the strategy information itself, so G_z can exceed the "
    "oracle's mean I* while the gross gain B − L is small or negative. Read the two together."
)
ANCHOR_MEANINGS = {
    "surprisal_sum_nats": "mean B: the base model's code length (nats/seq)",
    "oracle_nll_nats": "mean −log p(y|x): the Bayes-optimal z-free code length",
    "base_excess_nats": "base excess: mean B − mean(−log p(y|x))",
    "oracle_info_nats": "mean I*: the z-gain of a latent that knows the strategy",
    "capture_ratio": "capture ratio of that latent",
}
PAIRED_MEANINGS = {
    "z_gain": "per-example L_shuffled − L_post",
    "gross_gain": "per-example B − L_post",
}


@dataclass(frozen=True)
class Report:
    """Everything `reports/` holds, by file name relative to its folder."""

    tables: dict[str, pd.DataFrame]  # tables/<name>.csv
    plots: dict[str, pd.DataFrame]  # plots/<name>.csv: dvc plots data
    figures: dict[str, Figure]  # figures/<name>.png
    metrics: dict[str, dict]  # metrics.json: {variant|base|oracle: {metric: mean}}
    summary: str  # summary.md


def fmt(value: float, digits: int = DIGITS) -> str:
    return f"{value:.{digits}f}" if math.isfinite(value) else NA


def fmt_interval(row: pd.Series, n_seeds: int) -> str:
    """`mean [low, high]`, flagged `(n=k)` when only k of the seeds define the metric."""
    if not math.isfinite(row["mean"]):
        return NA
    text = f"{fmt(row['mean'])} [{fmt(row['low'])}, {fmt(row['high'])}]"
    if row["over"] == OVER_SEEDS and row["n"] < n_seeds:
        text += f" (n={row['n']})"
    return text


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A GitHub-flavoured Markdown table; a `|` inside a cell is escaped."""

    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    return "\n".join([line(header), "|" + "---|" * len(header), *map(line, rows)])


def metric_table(table: pd.DataFrame, metrics: Sequence[str], n_seeds: int) -> str:
    """Rows in the table's order of first appearance, one column per metric."""
    cells = {(r["variant"], r["metric"]): fmt_interval(r, n_seeds) for _, r in table.iterrows()}
    names = list(dict.fromkeys(table["variant"]))
    rows = [[name] + [cells.get((name, m), NOT_APPLICABLE) for m in metrics] for name in names]
    return markdown_table(["variant", *(f"`{m}`" for m in metrics)], rows)


def winner_sentence(
    gains: pd.DataFrame, metric: str, label: str, confidence: float, n_seeds: int
) -> str:
    """Which variant has the largest mean `metric`, and whether its CI overlaps the runner-up's."""
    rows = gains[(gains["metric"] == metric) & (gains["variant"] != ORACLE)]
    rows = rows[rows["mean"].notna()].sort_values("mean", ascending=False, kind="stable")
    if rows.empty:
        return f"No variant has a defined {label} (`{metric}`)."
    first = rows.iloc[0]
    text = f"Largest {label} (`{metric}`): **{first['variant']}**, {fmt_interval(first, n_seeds)}."
    if len(rows) == 1:
        return text + " There is no other variant to compare it with."
    second = rows.iloc[1]
    overlap = first["low"] <= second["high"] and second["low"] <= first["high"]
    verdict = (
        "overlap, so these seeds do not separate the two"
        if overlap
        else "do not overlap: the lead is larger than the seed-to-seed spread"
    )
    return (
        text + f" Runner-up: {second['variant']}, {fmt_interval(second, n_seeds)}; "
        f"the {confidence:.0%} CIs {verdict}."
    )


def _header(params: Params, n_runs: int) -> list[str]:
    data, cvae, settings = params.data, params.cvae, params.report
    return [
        "# zgain report",
        "",
        "Generated by `python -m stages.report` from the evaluation outputs; do not edit.",
        "",
        f"- World: K = {len(data.transforms)} strategies ({', '.join(data.transforms)}), "
        f"V = {data.vocab_size} content tokens, x length {data.length_min}–{data.length_max}, "
        f"noise ε = {data.noise}, `{data.prior}` prior.",
        f"- Runs: {len(cvae.variants)} variants × {len(cvae.seeds)} seeds = {n_runs} "
        f"(variants: {', '.join(cvae.variants)}; seeds: {', '.join(map(str, cvae.seeds))}), "
        f"each scored on n_test = {data.n_test} test examples.",
        f"- Cells: mean over seeds [{settings.confidence:.0%} percentile-bootstrap CI, "
        f"{settings.n_resamples} resamples]; `(n=k)`: only k seeds define the metric; "
        f"{NA}: undefined; {NOT_APPLICABLE}: does not apply.",
    ]


def summary_markdown(
    params: Params,
    results: EvalResults,
    tables: dict[str, pd.DataFrame],
    figures: Sequence[str],
) -> str:
    """The Markdown summary: header, commentary, metric tables, anchors, paired tests, figures.

    `tables` are those of `build_report`; `figures` the figure file names under figures/.
    """
    n_seeds, confidence = len(results.seeds), params.report.confidence
    gains = tables["gains"]
    lines = _header(params, len(results.runs))
    lines += ["", "## Which variant wins", ""]
    headlines = [
        ("gain_z_nats_seq", "z-attributable absolute gain"),
        ("gain_gross_nats_seq", "gross absolute gain (code-length reduction B − L)"),
        ("frac_gain_pop", "fractional gain"),
    ]
    lines.append(
        " ".join(winner_sentence(gains, m, label, confidence, n_seeds) for m, label in headlines)
    )
    lines += ["", WINNER_NOTE]
    for group, metrics in METRIC_GROUPS.items():
        lines += ["", f"## {GROUP_TITLES[group]}", ""]
        lines.append(metric_table(tables[group], metrics, n_seeds))
        if group in GROUP_NOTES:
            lines += ["", GROUP_NOTES[group]]
        if group == "posterior":
            cap = mi_cap(results)
            n = f"{math.exp(cap):.0f}" if math.isfinite(cap) else NA
            lines += [
                "",
                f"`mi_q_nats` cannot exceed log N = {fmt(cap)} nats (N = {n} test examples): "
                "a value near the cap means at least that much, not that much.",
            ]
    anchors = tables[ANCHOR_TABLE]
    lines += ["", "## Anchors: base and oracle", ""]
    rows = [
        [r["variant"], ANCHOR_MEANINGS[r["metric"]], fmt_interval(r, n_seeds), r["over"]]
        for _, r in anchors.iterrows()
    ]
    lines.append(markdown_table(["row", "quantity", "value [CI]", "CI over"], rows))
    lines += ["", *_paired_section(tables[PAIRED_TABLE], params.report.baseline_variant)]
    lines += ["", "## Figures", ""]
    lines += [f"![{Path(n).stem}]({FIGURES_DIR}/{n})" for n in figures]
    return "\n".join(lines) + "\n"


def _paired_section(paired: pd.DataFrame, baseline: str) -> list[str]:
    lines = [f"## Paired tests against the baseline ({baseline})", ""]
    if paired.empty:
        return [*lines, f"Only the baseline {baseline} is listed: there is nothing to test."]
    lines.append(
        f"Two-sided Wilcoxon signed-rank over test examples; each gain is averaged over seeds "
        f"per example, then paired by example_id. The baseline {baseline} is the reference and "
        "has no row. Measures: "
        + "; ".join(f"`{k}` = {v}" for k, v in PAIRED_MEANINGS.items())
        + " (nats/seq). Median difference = variant − baseline."
    )
    rows = [
        [
            r["variant"],
            f"`{r['measure']}`",
            str(r["n"]),
            fmt(r["median_difference"]),
            fmt(r["statistic"], 1),
            f"{r['p_value']:.2e}" if math.isfinite(r["p_value"]) else NA,
        ]
        for _, r in paired.iterrows()
    ]
    header = ["variant", "measure", "n", "median difference", "statistic", "p-value"]
    return [*lines, "", markdown_table(header, rows)]


def build_report(results: EvalResults, params: Params) -> Report:
    """Every table, figure and metric of `reports/` for the listed runs."""
    settings = params.report
    anchors = anchor_table(results, settings)
    tables = {g: seed_table(results, m, settings) for g, m in METRIC_GROUPS.items()}
    tables["gains"] = pd.concat([tables["gains"], oracle_gain_rows(anchors)], ignore_index=True)
    tables[ANCHOR_TABLE] = anchors
    tables[PAIRED_TABLE] = paired_table(results, settings.baseline_variant)
    plots = {"rate_gain": rate_gain(results), "gain_by_position": gain_by_position(results)}
    figures = build_figures(results, tables["gains"], plots["gain_by_position"], plots["rate_gain"])
    return Report(
        tables=tables,
        plots=plots,
        figures=figures,
        metrics=metrics_summary(results, anchors),
        summary=summary_markdown(params, results, tables, list(figures)),
    )


def _write_csv(table: pd.DataFrame, path: Path) -> None:
    with atomic_path(path) as tmp:
        table.to_csv(tmp, index=False)


def write_report(report: Report, reports_dir: str | Path) -> None:
    """Write every file of `report` under `reports_dir`, each atomically."""
    root = Path(reports_dir)
    for name, table in report.tables.items():
        _write_csv(table, root / TABLES_DIR / f"{name}.csv")
    for name, table in report.plots.items():
        _write_csv(table, root / PLOTS_DIR / f"{name}.csv")
    for name, fig in report.figures.items():
        save_png(fig, root / FIGURES_DIR / name)
    write_json(report.metrics, root / METRICS_FILE)
    with atomic_path(root / SUMMARY_FILE) as tmp:
        tmp.write_text(report.summary)
