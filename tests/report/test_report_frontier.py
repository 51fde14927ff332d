"""The equal-rate comparison: headline rate, the frontier table, the R_mean/R_dist twin check."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from zgain.core.runs import Run
from zgain.report.sections.checks import twin_conclusion
from zgain.results.analysis.controller import ControllerEnd, rate_check
from zgain.results.frontier import (
    frontier_plot,
    frontier_table,
    headline_rate,
    identical_runs,
    twin_check,
    twin_variants,
)
from zgain.results.load.runs import EvalResults
from zgain.stats.intervals import t_quantile

SEEDS = (0, 1, 2)


def results(rate: float, values: dict[str, dict[str, tuple[float, ...]]]) -> EvalResults:
    """Runs at one rate: values[variant][metric] per seed; every other frontier metric 0."""
    rows = []
    for variant, metrics in values.items():
        for k, seed in enumerate(SEEDS):
            row = {m: 0.0 for m in ("capture", "probe_accuracy", "normalized_recovery")}
            row |= {"variant": variant, "seed": seed, "kl_target": rate}
            row |= {metric: series[k] for metric, series in metrics.items()}
            rows.append(row)
    return EvalResults(
        tuple(values), SEEDS, rate, pd.DataFrame(rows), pd.DataFrame(), pd.DataFrame()
    )


def test_headline_rate_is_the_target_nearest_the_oracle_information() -> None:
    assert headline_rate((0.25, 0.5, 1.0, 2.0), 0.89) == 1.0
    assert headline_rate((0.25, 0.5, 1.0, 2.0), 0.6) == 0.5
    assert headline_rate((0.5, 1.5), 1.0) == 0.5  # a tie goes to the first listed
    with pytest.raises(ValueError, match="no target rates"):
        headline_rate((), 1.0)


def test_a_variant_whose_every_run_equals_an_earlier_ones_is_named_identical() -> None:
    same = {"kl": (1.0, 1.1, 0.9), "marginal_gain": (-0.1, 0.2, 0.0)}
    other = {"kl": (1.0, 1.1, 0.9), "marginal_gain": (-0.1, 0.2, 1e-12)}  # one seed differs
    at_one = results(1.0, {"a": same, "b": other, "c": same, "d": same})
    at_two = results(2.0, {"a": same, "b": other, "c": same, "d": other})
    # c equals a at both rates; d equals a at 1.0 only; nothing equals b
    assert identical_runs({1.0: at_one, 2.0: at_two}) == {"c": "a"}
    assert identical_runs({1.0: at_one}) == {"c": "a", "d": "a"}


def test_twins_are_the_pure_mean_and_pure_dist_variants() -> None:
    weights = {"a": {"mean": 1.0}, "b": {"sum": 1.0}, "c": {"dist": 1.0, "mean": 0.0}}
    assert twin_variants(weights) == ("a", "c")
    assert twin_variants({"a": {"mean": 1.0}, "b": {"dist": 2.0}}) is None
    assert twin_variants({"a": {"mean": 1.0}}) is None


def test_twin_check_pairs_seeds_and_separates_only_when_the_interval_excludes_zero() -> None:
    by_rate = {
        0.5: results(
            0.5,
            {
                "m": {
                    "z_information": (1.0, 2.0, 3.0),
                    "marginal_gain": (0.1, 0.2, 0.3),
                    "kl": (0.5,) * 3,
                },
                "d": {
                    "z_information": (1.1, 1.9, 3.0),
                    "marginal_gain": (0.0, 0.1, 0.2),
                    "kl": (0.5,) * 3,
                },
            },
        )
    }
    table = twin_check(by_rate, ("m", "d"), 0.95).set_index("metric")
    z = table.loc["z_information"]
    diffs = np.array([-0.1, 0.1, 0.0])
    half = t_quantile(0.95, 3) * diffs.std(ddof=1) / math.sqrt(3)
    assert z["mean"] == pytest.approx(0.0, abs=1e-12)
    assert (z["low"], z["high"]) == pytest.approx((-half, half))
    marginal = table.loc["marginal_gain"]  # every seed differs by exactly 0.1: zero width
    assert marginal["mean"] == pytest.approx(0.1)
    assert marginal["low"] == pytest.approx(0.1) and marginal["high"] == pytest.approx(0.1)
    assert "separated" not in table  # the pair's conclusion is its verdicts'


def test_the_twin_conclusion_reads_the_pairs_verdicts() -> None:
    def verdicts(*words: str) -> pd.DataFrame:
        return pd.DataFrame(
            [
                {"rate": r, "metric": "capture", "a": "d", "b": "m", "verdict": w}
                for r, w in zip((0.5, 1.0), words, strict=True)
            ]
        )

    assert "equivalent within ±δ at every rate" in twin_conclusion(
        ("m", "d"), verdicts("equivalent", "equivalent")
    )
    assert "separate them on capture at C = 1.0" in twin_conclusion(
        ("m", "d"), verdicts("equivalent", "worse")
    )
    assert "1 of 2 (rate, metric) cells are equivalent" in twin_conclusion(
        ("m", "d"), verdicts("equivalent", "undetermined")
    )


def test_frontier_table_plot_and_rate_check() -> None:
    by_rate = {
        rate: results(
            rate,
            {
                "v": {
                    "z_information": (rate, rate, rate),
                    "marginal_gain": (0.0,) * 3,
                    "kl": (rate * 1.05, rate, rate * 1.2),
                },
                "w": {"z_information": (0.0,) * 3, "marginal_gain": (0.1,) * 3, "kl": (rate,) * 3},
            },
        )
        for rate in (0.5, 1.0)
    }
    table = frontier_table(by_rate, 0.95)
    row = table[(table["variant"] == "v") & (table["rate"] == 1.0) & (table["metric"] == "kl")]
    assert row["mean"].item() == pytest.approx((1.05 + 1.0 + 1.2) / 3)
    plot = frontier_plot(table)
    assert list(plot[["series", "rate"]].itertuples(index=False, name=None)) == [
        ("v", 0.5),
        ("v", 1.0),
        ("w", 0.5),
        ("w", 1.0),
    ]
    assert plot.loc[plot["series"] == "w", "marginal_gain"].tolist() == pytest.approx([0.1, 0.1])
    settled = {
        Run(variant, rate, seed, 0): ControllerEnd(0.05, rate, rate * 0.99, rate * 1.01)
        for variant in ("v", "w")
        for rate in (0.5, 1.0)
        for seed in SEEDS
    }
    # seed 2 of v: β pinned at the floor at C = 0.5; on target on the train batches at C = 1.0
    ends = settled | {Run("v", 0.5, 2, 0): ControllerEnd(1e-4, 0.3, 0.29, 0.31)}
    check = rate_check(by_rate, ends, (1e-4, 10.0))
    flagged = check[check["off"]]
    # only seed 2 of v is more than 10% off (+20%); +5% is within tolerance
    assert flagged[["variant", "seed"]].drop_duplicates().values.tolist() == [["v", 2]]
    assert flagged["relative_error"].to_numpy() == pytest.approx([0.2, 0.2])
    assert flagged["cause"].tolist() == ["beta_floor", "saved_weights"]
    assert check.loc[~check["off"], "cause"].isna().all()
    row = check[(check["variant"] == "v") & (check["rate"] == 0.5) & (check["seed"] == 2)]
    assert row[["beta_end", "kl_ema_end", "kl_ema_low", "kl_ema_high"]].values.tolist() == [
        [1e-4, 0.3, 0.29, 0.31]
    ]


def test_a_run_without_target_is_never_flagged() -> None:
    at = results(
        1.0, {"v": {"z_information": (0.0,) * 3, "marginal_gain": (0.0,) * 3, "kl": (5.0,) * 3}}
    )
    at.runs["kl_target"] = math.nan
    check = rate_check({1.0: at}, {}, (1e-4, 10.0))  # no target: no controller state read
    assert not check["off"].any() and check["relative_error"].isna().all()
    assert check["beta_end"].isna().all() and check["cause"].isna().all()
