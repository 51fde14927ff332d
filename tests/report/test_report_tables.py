"""The report's tables, plots and metrics.json on fake runs with known numbers.

See docs/method.md#evaluation-quantities and docs/method.md#uncertainty-over-seeds; the fake
numbers are described in report_fakes.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from report_fakes import (
    BASELINE,
    CURVE_STEPS,
    HEADLINE,
    LOW,
    LOW_SCALE,
    ORACLE_TOKEN,
    RATES,
    SEEDS,
    SPLIT,
    TOKEN_Z,
    WEIGHTS,
    Z_INFORMATION,
    build,
    curve_value,
    sum_marginal_values,
)

from zgain.params import Params

T_975_2 = 4.302652729749464  # t_{0.975, 2}
HALF_UNIT = T_975_2 / math.sqrt(3)  # half-width of 3 seeds with sample sd 1


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Params, Path]:
    params = build(tmp_path_factory.mktemp("tables"))
    return params, Path(params.paths.reports_dir)


def read(reports: Path, name: str) -> pd.DataFrame:
    return pd.read_csv(reports / "tables" / f"{name}.csv")


def cell(table: pd.DataFrame, row: str, metric: str) -> pd.Series:
    rows = table[(table["variant"] == row) & (table["metric"] == metric)]
    assert len(rows) == 1, (row, metric)
    return rows.iloc[0]


def test_seed_mean_and_t_interval_by_hand(built: tuple[Params, Path]) -> None:
    _, reports = built
    table = read(reports, "decomposition")
    z = cell(table, BASELINE, "z_information")  # seeds 1, 2, 3
    assert z["mean"] == pytest.approx(2.0)
    assert (z["low"], z["high"]) == pytest.approx((2.0 - HALF_UNIT, 2.0 + HALF_UNIT), rel=1e-9)
    assert z["n"] == 3 and z["kind"] == "seeds"
    for variant in WEIGHTS:
        values = np.array(Z_INFORMATION[variant])
        row = cell(table, variant, "z_information")
        half = T_975_2 * values.std(ddof=1) / math.sqrt(3)
        assert row["mean"] == pytest.approx(values.mean())
        assert row["high"] - row["mean"] == pytest.approx(half, rel=1e-9)


def test_base_and_oracle_rows(built: tuple[Params, Path]) -> None:
    _, reports = built
    table = read(reports, "decomposition")
    assert list(dict.fromkeys(table["variant"])) == ["base", *WEIGHTS, "oracle"]
    columns = ("gross_gain", "marginal_gain", "z_information", "capture", "kl", "net_gain")
    for metric in columns:
        base = cell(table, "base", metric)
        assert base["mean"] == 0.0 and base["kind"] == "definition" and math.isnan(base["low"])
    expected = {
        "gross_gain": SPLIT["oracle_gross_gain"],
        "marginal_gain": SPLIT["oracle_marginal_gain"],
        "z_information": SPLIT["oracle_info"],
        "capture": 1.0,
        "kl": SPLIT["oracle_info"],
        "net_gain": SPLIT["oracle_marginal_gain"],
    }
    for metric, value in expected.items():
        oracle = cell(table, "oracle", metric)
        assert oracle["mean"] == pytest.approx(value) and math.isnan(oracle["high"])
    assert cell(table, "oracle", "kl")["source"] == "oracle_info"


def test_ceiling_floor_and_cap_rows(built: tuple[Params, Path]) -> None:
    params, reports = built
    fractional = read(reports, "fractional")
    for metric in ("frac_gain_pop", "frac_gain_ex", "frac_gain_pop_tok", "frac_z_information"):
        row = cell(fractional, "oracle", metric)
        assert row["source"] == f"{metric}_ceiling"
        assert row["mean"] == pytest.approx(SPLIT[f"{metric}_ceiling"])
    recovery = read(reports, "recovery")
    assert cell(recovery, "floor", "probe_accuracy")["mean"] == SPLIT["probe_floor"]
    assert cell(recovery, "ceiling", "probe_accuracy_mean")["mean"] == SPLIT["probe_ceiling"]
    assert cell(recovery, "floor", "kmeans_nmi")["mean"] == 0.0
    assert cell(recovery, "ceiling", "kmeans_nmi")["mean"] == SPLIT["kmeans_nmi_ceiling"]
    assert cell(recovery, "floor", "kmeans_accuracy")["mean"] == SPLIT["kmeans_accuracy_floor"]
    localization = read(reports, "localization")
    oracle_share = cell(localization, "oracle", "localization_share")
    assert oracle_share["mean"] == SPLIT["oracle_localization_share"]
    posterior = read(reports, "posterior")
    assert cell(posterior, "cap", "mi_q_nats")["mean"] == pytest.approx(SPLIT["mi_q_cap_nats"])
    latent_dim = params.cvae.common.model.latent_dim
    assert cell(posterior, "cap", "active_units")["mean"] == latent_dim
    diagnostics = read(reports, "diagnostics")
    iw = cell(diagnostics, BASELINE, "iw_samples")
    assert iw["mean"] == SPLIT["iw_samples"] and iw["kind"] == "split"


def test_undefined_seeds_leave_no_mean(built: tuple[Params, Path]) -> None:
    _, reports = built
    row = cell(read(reports, "localization"), "token_sum", "token_info_spearman")
    assert row["n"] == 0 and math.isnan(row["mean"])


def test_metrics_json_has_exactly_the_compact_shape(built: tuple[Params, Path]) -> None:
    _, reports = built
    metrics = json.loads((reports / "metrics.json").read_text())
    assert list(metrics) == ["headline_rate", "oracle_info", "variants", "adjusted_to_C"]
    assert metrics["headline_rate"] == HEADLINE
    assert metrics["oracle_info"] == SPLIT["oracle_info"]
    assert list(metrics["variants"]) == list(WEIGHTS)
    keys = ["marginal_gain", "z_information", "capture", "kl", "normalized_recovery"]
    for values in metrics["variants"].values():
        assert list(values) == keys
    ours = metrics["variants"]
    assert ours[BASELINE]["z_information"] == pytest.approx(2.0)
    assert ours["token_sum"]["marginal_gain"] == pytest.approx(np.mean(sum_marginal_values(-0.1)))
    assert ours["example_inverse"]["capture"] == pytest.approx(np.mean([0.5, 0.65, 0.7]))
    assert ours[BASELINE]["normalized_recovery"] == pytest.approx(0.2)
    adjusted = metrics["adjusted_to_C"]
    table = pd.read_csv(reports / "tables" / "adjustment.csv")
    row = table[(table["rate"] == HEADLINE) & (table["metric"] == "capture")]
    assert {v: adjusted[v]["capture"] for v in ours} == dict(
        zip(row["variant"], row["mean"], strict=True)
    )
    # the DVC metric holds the claims over bases only: with one base, none
    view = json.loads((reports / "capture.json").read_text())
    assert view == {}


def test_frontier_plot_has_one_row_per_variant_and_rate(built: tuple[Params, Path]) -> None:
    _, reports = built
    plot = pd.read_csv(reports / "plots" / "frontier.csv")
    assert list(plot.columns[:2]) == ["series", "rate"]
    assert {"kl", "z_information", "capture", "marginal_gain", "probe_accuracy"} <= set(plot)
    assert len(plot) == len(WEIGHTS) * len(RATES)
    row = plot[(plot["series"] == "example_inverse") & (plot["rate"] == LOW)].iloc[0]
    assert row["z_information"] == pytest.approx(LOW_SCALE * np.mean([5.0, 6.5, 7.0]))
    assert row["kl"] == pytest.approx(LOW / HEADLINE * 2.5)  # the mean of 2.4, 2.5, 2.6 at LOW


def test_rate_check_flags_runs_more_than_ten_percent_off(built: tuple[Params, Path]) -> None:
    _, reports = built
    check = pd.read_csv(reports / "tables" / "rate_check.csv")
    assert len(check) == len(WEIGHTS) * len(RATES) * len(SEEDS)
    assert (check["kl_target"] == check["rate"]).all()
    expected_error = check["kl"] / check["rate"] - 1
    assert check["relative_error"].to_numpy() == pytest.approx(expected_error.to_numpy())
    assert check["off"].tolist() == (expected_error.abs() > 0.10).tolist()
    assert check[check["off"]][["variant", "seed"]].drop_duplicates().values.tolist() == [
        ["token_sum", 2]  # kl 3.0 against 2.5 (and the same share at the other rate)
    ]
    mean = check[(check["variant"] == BASELINE) & (check["rate"] == HEADLINE)]
    # the fake curves end with kl_ema = 6.x, steady over their closing steps: drifting off C
    ends = mean["kl_ema_end"].to_numpy()
    assert ends == pytest.approx(
        [curve_value("kl_ema", BASELINE, s, CURVE_STEPS[-1]) for s in SEEDS]
    )
    assert check.loc[check["off"], "cause"].eq("drifting").all()
    assert check.loc[~check["off"], "cause"].isna().all()
    summary = (reports / "summary.md").read_text()
    why = next(line for line in summary.splitlines() if line.startswith("Why, from each run"))
    assert f"in {int(check['off'].sum())} runs (" in why and "was steady" in why


def test_learning_curves_join_every_headline_run(built: tuple[Params, Path]) -> None:
    _, reports = built
    curves = pd.read_csv(reports / "plots" / "learning_kl.csv")
    assert list(curves.columns) == ["step", "series", "kl"]
    assert set(curves["series"]) == {f"{v}/seed{s}" for v in WEIGHTS for s in SEEDS}
    row = curves[(curves["series"] == "token_sum/seed1") & (curves["step"] == CURVE_STEPS[1])]
    assert row["kl"].item() == pytest.approx(curve_value("kl", "token_sum", 1, CURVE_STEPS[1]))


def test_information_by_position(built: tuple[Params, Path]) -> None:
    _, reports = built
    plot = pd.read_csv(reports / "plots" / "information_by_position.csv")
    assert list(plot.columns) == ["position", "series", "z_information"]
    assert set(plot["series"]) == {*WEIGHTS, "oracle"}
    # i^θ_t = a·(t + 1) + 0.1·seed, so the seed-pooled mean is a·(t + 1) + 0.1
    for variant, a in ((v, TOKEN_Z[v]) for v in WEIGHTS):
        rows = plot[plot["series"] == variant].sort_values("position")
        assert rows["position"].tolist() == [0, 1, 2, 3, 4]
        expected = a * (rows["position"] + 1) + 0.1
        assert rows["z_information"].to_numpy() == pytest.approx(expected.to_numpy())
    oracle = plot[plot["series"] == "oracle"].sort_values("position")
    expected_oracle = ORACLE_TOKEN * (oracle["position"] + 1)
    assert oracle["z_information"].to_numpy() == pytest.approx(expected_oracle.to_numpy())
    table = read(reports, "information_by_position")
    row = table[(table["variant"] == BASELINE) & (table["position"] == 2)].iloc[0]
    half = T_975_2 * 0.1 / math.sqrt(3)  # per-seed means differ by 0.1 per seed: sd 0.1
    assert (row["low"], row["high"]) == pytest.approx((row["mean"] - half, row["mean"] + half))


def test_information_by_strategy(built: tuple[Params, Path]) -> None:
    """The fakes draw strategy s = i mod 4 with n = s + 2 target positions, so per example
    M − L = a·n(n + 1)/2 + 0.1·seed·n and I* = ORACLE_TOKEN·n(n + 1)/2."""
    params, reports = built
    table = read(reports, "information_by_strategy")
    names = params.data.transforms
    assert set(table["metric"]) == set(names)
    assert list(dict.fromkeys(table["variant"])) == [*WEIGHTS, "oracle"]
    mean_seed = float(np.mean(SEEDS))
    for s, name in enumerate(names):
        n = s + 2
        for variant in WEIGHTS:
            row = cell(table, variant, name)
            expected = TOKEN_Z[variant] * n * (n + 1) / 2 + 0.1 * n * mean_seed
            assert row["mean"] == pytest.approx(expected)
            half = T_975_2 * 0.1 * n * float(np.std(SEEDS, ddof=1)) / math.sqrt(len(SEEDS))
            assert (row["low"], row["high"]) == pytest.approx((expected - half, expected + half))
        oracle = cell(table, "oracle", name)
        assert oracle["mean"] == pytest.approx(ORACLE_TOKEN * n * (n + 1) / 2)
        assert oracle["kind"] == "split" and math.isnan(oracle["low"])
    details = (reports / "details.md").read_text()  # the summary's view of its other tables
    assert "## Z-information by hidden strategy (nats per sequence) at the headline rate" in details
