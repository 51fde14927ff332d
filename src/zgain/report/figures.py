"""The figures of `reports/figures/`, drawn headless and deterministically.

Figures are built on the Agg canvas directly (no pyplot, so no global backend or figure
state): the same inputs give the same PNG bytes. Colours follow the variants' params order.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib import colormaps
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from zgain.core.io import atomic_path
from zgain.report.tables import EvalResults, per_example

DPI = 120
FIGSIZE = (6.4, 4.4)  # inches
N_SURPRISAL_BINS = 10  # quantile bins of the base's token-mean surprisal b_i
PALETTE = "tab10"
# No "Software" entry: the bytes then do not change with the matplotlib version.
PNG_METADATA: dict[str, str | None] = {"Software": None}


def _colours(variants: Sequence[str]) -> dict[str, tuple]:
    cmap = colormaps[PALETTE]
    return {v: cmap(i % cmap.N) for i, v in enumerate(variants)}


def _new_figure(title: str, xlabel: str, ylabel: str) -> tuple[Figure, Axes]:
    fig = Figure(figsize=FIGSIZE, dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.set(title=title, xlabel=xlabel, ylabel=ylabel)
    ax.grid(alpha=0.3)
    return fig, ax


def _lines_per_variant(
    ax: Axes, frame: pd.DataFrame, x: str, y: str, variants: Sequence[str]
) -> None:
    """One line with markers per variant, sorted by x, coloured in params order, with a legend."""
    colours = _colours(variants)
    for variant in variants:
        rows = frame[frame["variant"] == variant].sort_values(x, kind="stable")
        ax.plot(rows[x], rows[y], marker="o", color=colours[variant], label=variant)
    ax.legend(fontsize="small")


def rate_gain_figure(rate_gain: pd.DataFrame, variants: Sequence[str]) -> Figure:
    """KL rate against z-attributable gain, one point per (variant, seed) run."""
    fig, ax = _new_figure(
        "Rate–gain: one point per run", "KL(q ‖ p) (nats)", "z-attributable gain G_z (nats/seq)"
    )
    colours = _colours(variants)
    for variant in variants:
        runs = rate_gain[rate_gain["variant"] == variant]
        ax.scatter(runs["kl_nats"], runs["gain_z_nats_seq"], color=colours[variant], label=variant)
    ax.legend(fontsize="small")
    return fig


def gain_by_position_figure(by_position: pd.DataFrame, variants: Sequence[str]) -> Figure:
    """Mean token gain b_t − ℓ_t per target position, pooled over seeds."""
    fig, ax = _new_figure(
        "Gain per token position", "target position t (y tokens, then EOS)", "mean b_t − ℓ_t (nats)"
    )
    ax.axhline(0.0, color="black", linewidth=0.8)
    _lines_per_variant(ax, by_position, "position", "token_gain", variants)
    return fig


def binned_gain(results: EvalResults, n_bins: int = N_SURPRISAL_BINS) -> pd.DataFrame:
    """Per variant and quantile bin of b_i: mean b_i and mean gross gain B − L (seeds pooled).

    The bins are quantiles of the test examples' b_i, shared by every variant.
    """
    base = per_example(results)["surprisal_mean"]
    bins = pd.qcut(base, q=n_bins, labels=False, duplicates="drop")
    examples = results.examples.assign(bin=results.examples["example_id"].map(bins))
    grouped = examples.groupby(["variant", "bin"], sort=False)
    return grouped[["surprisal_mean", "gain"]].mean().reset_index()


def gain_vs_surprisal_figure(binned: pd.DataFrame, variants: Sequence[str]) -> Figure:
    """Mean per-example gross gain against the base's token-mean surprisal, in quantile bins."""
    fig, ax = _new_figure(
        "Gain vs base surprisal (quantile bins)",
        "base surprisal b_i (nats/token)",
        "mean gross gain B − L (nats/seq)",
    )
    _lines_per_variant(ax, binned, "surprisal_mean", "gain", variants)
    return fig


def absolute_vs_fractional_figure(gains: pd.DataFrame, variants: Sequence[str]) -> Figure:
    """Absolute (G_z) against fractional (F_pop) gain: mean over seeds with CI error bars."""
    fig, ax = _new_figure(
        "Absolute vs fractional gain (mean, CI over seeds)", "G_z (nats/seq)", "F_pop = 1 − ΣL/ΣB"
    )
    colours = _colours(variants)
    stats = gains.set_index(["variant", "metric"])
    for variant in variants:
        x, y = stats.loc[(variant, "gain_z_nats_seq")], stats.loc[(variant, "frac_gain_pop")]
        if not (np.isfinite(x["mean"]) and np.isfinite(y["mean"])):
            continue
        ax.errorbar(
            x["mean"],
            y["mean"],
            xerr=[[x["mean"] - x["low"]], [x["high"] - x["mean"]]],
            yerr=[[y["mean"] - y["low"]], [y["high"] - y["mean"]]],
            fmt="o",
            capsize=3,
            color=colours[variant],
            label=variant,
        )
    ax.legend(fontsize="small")
    return fig


def save_png(fig: Figure, path: str | Path) -> None:
    """Write `fig` as PNG, atomically."""
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=DPI, metadata=PNG_METADATA)


def build_figures(
    results: EvalResults, gains: pd.DataFrame, by_position: pd.DataFrame, rate_gain: pd.DataFrame
) -> dict[str, Figure]:
    """Every figure of the report by file name; `gains` is the seed table of the gains group."""
    variants = results.variants
    return {
        "rate_gain.png": rate_gain_figure(rate_gain, variants),
        "gain_by_position.png": gain_by_position_figure(by_position, variants),
        "gain_vs_surprisal.png": gain_vs_surprisal_figure(binned_gain(results), variants),
        "absolute_vs_fractional.png": absolute_vs_fractional_figure(gains, variants),
    }
