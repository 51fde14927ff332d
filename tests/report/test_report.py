"""Tests for the report stage on fake evaluation outputs with known numbers.

See docs/method.md#evaluation-quantities and docs/method.md#uncertainty-over-seeds.

Three listed variants × three seeds, plus a fourth variant left on disk but absent from params.
By construction `example_inverse` has the largest z-attributable gain and `token_sum` the
largest gross (hence fractional) gain, most of it not carried by z.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
import yaml
from conftest import REPO_ROOT

from stages import report as report_stage
from zgain.core.errors import DataError
from zgain.core.io import list_array, run_dir, write_json, write_table
from zgain.evaluate.estimators import spearman
from zgain.evaluate.gains import gain_summary
from zgain.evaluate.schema import ENVIRONMENT_KEY, EVAL_SCHEMA
from zgain.params import Params, parse_params
from zgain.report.statistics import bootstrap_ci

N_EXAMPLES = 60
SEEDS = (0, 1, 2)
BASELINE = "token_mean"
# variant -> (gross gain per example, z-attributable part of it), nats/seq
GAINS = {
    "token_mean": (0.2, 0.1),
    "token_sum": (1.2, 0.05),
    "example_inverse": (0.8, 0.7),
    "dist_normalized": (5.0, 4.0),  # on disk only: would win everything if it leaked
}
LISTED = ("token_mean", "token_sum", "example_inverse")
REMOVED = "dist_normalized"
NULL_VARIANT = "token_sum"  # its localization_share is null in every seed
FAKE_ENVIRONMENT = {"device": "cpu", "dtype": "float32", "threads": 1, "torch_version": "x"}
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
MIN_PNG_BYTES = 5_000
FIGURES = (
    "rate_gain.png",
    "gain_by_position.png",
    "gain_vs_surprisal.png",
    "absolute_vs_fractional.png",
)


def fake_run(variant: str, seed: int) -> tuple[pa.Table, dict[str, float | None]]:
    """One run's EVAL_SCHEMA table (rows shuffled) and its metrics, with known gains."""
    world = np.random.default_rng(0)  # the test split and base model: the same in every run
    n_tokens = world.integers(3, 9, N_EXAMPLES)
    width = int(n_tokens.max())
    present = np.arange(width)[None, :] < n_tokens[:, None]
    b = np.where(present, world.uniform(0.5, 2.5, (N_EXAMPLES, width)), 0.0)
    base = b.sum(1)
    oracle_nll = base - world.uniform(0.2, 0.4, N_EXAMPLES)
    oracle_info = world.uniform(0.0, 1.0, N_EXAMPLES)
    revealed = present & (world.uniform(size=(N_EXAMPLES, width)) < 0.4)

    rng = np.random.default_rng([seed, list(GAINS).index(variant)])
    gross, z = GAINS[variant]
    gross_i = gross + rng.normal(0.0, 0.05, N_EXAMPLES)
    token_gain = np.where(present, b / base[:, None] * gross_i[:, None], 0.0)
    post = base - token_gain.sum(1)
    shuffled = post + z + rng.normal(0.0, 0.05, N_EXAMPLES)
    kl = np.abs(z + rng.normal(0.0, 0.1, N_EXAMPLES))
    iw = -(post + 0.5 * kl)
    order = rng.permutation(N_EXAMPLES)  # pairing must go by example_id, not by row
    columns = {
        "example_id": np.arange(N_EXAMPLES) + 1000,
        "variant": [variant] * N_EXAMPLES,
        "seed": np.full(N_EXAMPLES, seed),
        "strategy": rng.integers(0, 4, N_EXAMPLES),
        "n_tokens": n_tokens,
        "surprisal_sum": base,
        "surprisal_mean": base / n_tokens,
        "nll_post": post,
        "nll_post_mean": post / n_tokens,
        "nll_prior": base + 0.01,
        "nll_shuffled": shuffled,
        "nll_zero": base,
        "kl": kl,
        "log_lik_iw": iw,
        "oracle_nll": oracle_nll,
        "oracle_info": oracle_info,
        "gain": base - post,
    }
    table = pa.table({k: pa.array(np.asarray(v)[order]) for k, v in columns.items()})
    table = table.append_column("token_gain", list_array(token_gain[order], n_tokens[order]))
    table = table.append_column("revealed", list_array(revealed[order], n_tokens[order]))
    metrics: dict[str, float | None] = dict(
        gain_summary(
            seq_base=base,
            seq_post=post,
            seq_shuffled=shuffled,
            seq_prior=base + 0.01,
            seq_zero=base,
            kl=kl,
            log_lik_iw=iw,
            n_tokens=n_tokens,
            oracle_info=oracle_info,
            oracle_nll=oracle_nll,
        )
    )
    metrics |= {
        "active_units": float(seed % 2 + len(variant) % 3),
        "mi_q_nats": 0.1 * seed + z,
        "mi_q_cap_nats": math.log(N_EXAMPLES),
        "strategy_nmi": 0.2 + 0.05 * seed,
        "strategy_matched_accuracy": 0.4 + 0.01 * seed,
        "strategy_probe_accuracy": 0.5 + z / 10,
        "localization_share": None if variant == NULL_VARIANT else 0.6 + 0.02 * seed,
        "revealed_token_share": 0.4,
        "spearman_surprisal_gain": spearman(base / n_tokens, base - post),
        "n_examples": float(N_EXAMPLES),
        "kl_dim_0": float(kl.mean()),
    }
    return table, metrics


def write_fake_runs(eval_dir: Path) -> None:
    for variant in GAINS:
        for seed in SEEDS:
            table, metrics = fake_run(variant, seed)
            where = run_dir(eval_dir, variant, seed)
            write_table(table, where / "examples.parquet", EVAL_SCHEMA)
            # As the evaluate stage writes it: the metrics plus what the run ran on.
            write_json({**metrics, ENVIRONMENT_KEY: FAKE_ENVIRONMENT}, where / "metrics.json")


def make_params(default_params_raw: dict, root: Path) -> Params:
    raw = default_params_raw
    raw["paths"] = {k: str(root / v) for k, v in raw["paths"].items()}
    raw["cvae"]["seeds"] = list(SEEDS)
    raw["cvae"]["variants"] = {v: raw["cvae"]["variants"][v] for v in LISTED}
    raw["data"]["n_test"] = N_EXAMPLES
    raw["report"]["n_resamples"] = 500
    raw["report"]["baseline_variant"] = BASELINE
    return parse_params(raw)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Params, Path]:
    """The report of the fake runs, built once for every test that only reads it."""
    root = tmp_path_factory.mktemp("report")
    params = make_params(yaml.safe_load((REPO_ROOT / "params.yaml").read_text()), root)
    write_fake_runs(Path(params.paths.eval_dir))
    report_stage.run(params)
    return params, Path(params.paths.reports_dir)


def eval_frame(params: Params, variant: str) -> pd.DataFrame:
    frames = [
        pd.read_parquet(run_dir(params.paths.eval_dir, variant, s) / "examples.parquet")
        for s in SEEDS
    ]
    return pd.concat(frames, ignore_index=True)


def run_metric(params: Params, variant: str, metric: str) -> np.ndarray:
    values = []
    for seed in SEEDS:
        path = run_dir(params.paths.eval_dir, variant, seed) / "metrics.json"
        value = json.loads(path.read_text())[metric]
        values.append(math.nan if value is None else value)
    return np.array(values)


def cell(table: pd.DataFrame, variant: str, metric: str) -> pd.Series:
    rows = table[(table["variant"] == variant) & (table["metric"] == metric)]
    assert len(rows) == 1
    return rows.iloc[0]


def test_seed_means_and_cis_match_recomputation(built: tuple[Params, Path]) -> None:
    params, reports = built
    gains = pd.read_csv(reports / "tables" / "gains.csv")
    for variant in LISTED:
        data = eval_frame(params, variant)
        per_seed_z = (data["nll_shuffled"] - data["nll_post"]).groupby(data["seed"]).mean()
        per_seed_frac = (
            1 - data.groupby("seed")["nll_post"].sum() / data.groupby("seed")["surprisal_sum"].sum()
        )
        for metric, recomputed in (
            ("gain_z_nats_seq", per_seed_z),
            ("frac_gain_pop", per_seed_frac),
        ):
            row = cell(gains, variant, metric)
            assert row["mean"] == pytest.approx(recomputed.mean(), rel=1e-12)
            mean, low, high = bootstrap_ci(
                recomputed.to_numpy(), confidence=0.95, seed=params.report.seed, n_resamples=500
            )
            assert (row["low"], row["high"]) == pytest.approx((low, high), rel=1e-12)
            assert row["low"] <= row["mean"] <= row["high"]
            assert row["low"] < row["high"]
            assert row["n"] == len(SEEDS) and row["over"] == "seeds"


def test_every_seed_table_brackets_its_mean(built: tuple[Params, Path]) -> None:
    params, reports = built
    for name in ("gains", "posterior", "recovery", "per_token"):
        table = pd.read_csv(reports / "tables" / f"{name}.csv")
        defined = table[table["mean"].notna()]
        assert (defined["low"] <= defined["mean"] + 1e-12).all()
        assert (defined["mean"] <= defined["high"] + 1e-12).all()
        for _, row in table[table["variant"] != "oracle"].iterrows():
            values = run_metric(params, row["variant"], row["metric"])
            finite = values[np.isfinite(values)]
            assert row["n"] == finite.size
            expected = finite.mean() if finite.size else math.nan
            assert row["mean"] == pytest.approx(expected, rel=1e-12, nan_ok=True)


def test_base_and_oracle_rows_come_from_the_examples(built: tuple[Params, Path]) -> None:
    params, reports = built
    data = eval_frame(params, BASELINE).drop_duplicates("example_id")
    excess = data["surprisal_sum"].mean() - data["oracle_nll"].mean()
    info = data["oracle_info"].mean()
    anchors = pd.read_csv(reports / "tables" / "anchors.csv")
    assert cell(anchors, "base", "base_excess_nats")["mean"] == pytest.approx(excess, rel=1e-12)
    assert cell(anchors, "oracle", "oracle_info_nats")["mean"] == pytest.approx(info, rel=1e-12)
    gains = pd.read_csv(reports / "tables" / "gains.csv")
    assert cell(gains, "oracle", "gain_z_nats_seq")["mean"] == pytest.approx(info, rel=1e-12)
    assert cell(gains, "oracle", "capture_ratio")["mean"] == 1.0
    metrics = json.loads((reports / "metrics.json").read_text())
    assert metrics["base"]["base_excess_nats"] == pytest.approx(excess, rel=1e-12)
    assert metrics["oracle"]["gain_z_nats_seq"] == pytest.approx(info, rel=1e-12)
    assert metrics["oracle"]["capture_ratio"] == 1.0


def test_metrics_json_holds_means_over_seeds(built: tuple[Params, Path]) -> None:
    params, reports = built
    metrics = json.loads((reports / "metrics.json").read_text())
    assert list(metrics) == [*LISTED, "base", "oracle"]
    for variant in LISTED:
        for metric in ("gain_z_nats_seq", "kl_nats", "strategy_nmi", "kl_dim_0"):
            expected = run_metric(params, variant, metric).mean()
            assert metrics[variant][metric] == pytest.approx(expected, rel=1e-12)
    assert metrics[NULL_VARIANT]["localization_share"] is None


def test_null_metric_prints_as_na(built: tuple[Params, Path]) -> None:
    _, reports = built
    summary = (reports / "summary.md").read_text()
    header = next(line for line in summary.splitlines() if "`localization_share`" in line)
    lines = summary.splitlines()
    start = lines.index(header)
    row = next(line for line in lines[start:] if line.startswith(f"| {NULL_VARIANT} |"))
    column = header.split(" | ").index("`localization_share`")
    assert row.split(" | ")[column].strip(" |") == "n/a"
    assert "nan" not in summary.lower()


def test_removed_variant_appears_nowhere(built: tuple[Params, Path]) -> None:
    _, reports = built
    texts = [p for p in reports.rglob("*") if p.suffix in {".md", ".csv", ".json"}]
    assert len(texts) == 10
    for path in texts:
        assert REMOVED not in path.read_text(), path
    for table in ("gains", "posterior", "recovery", "per_token"):
        variants = set(pd.read_csv(reports / "tables" / f"{table}.csv")["variant"])
        assert variants - {"oracle"} == set(LISTED)


def test_paired_tests_find_a_consistent_shift(built: tuple[Params, Path]) -> None:
    params, reports = built
    paired = pd.read_csv(reports / "tables" / "paired_wilcoxon.csv")
    assert BASELINE not in set(paired["variant"])
    assert set(paired["baseline"]) == {BASELINE}
    assert len(paired) == 2 * (len(LISTED) - 1)
    row = paired[(paired["variant"] == "example_inverse") & (paired["measure"] == "z_gain")]
    assert row["p_value"].item() < 1e-8
    ours, base = (eval_frame(params, v) for v in ("example_inverse", BASELINE))
    z = [(f["nll_shuffled"] - f["nll_post"]).groupby(f["example_id"]).mean() for f in (ours, base)]
    assert row["median_difference"].item() == pytest.approx(np.median(z[0] - z[1]), rel=1e-12)
    assert row["median_difference"].item() == pytest.approx(0.6, abs=0.05)
    assert f"Paired tests against the baseline ({BASELINE})" in (reports / "summary.md").read_text()


def test_commentary_names_the_constructed_winners(built: tuple[Params, Path]) -> None:
    _, reports = built
    summary = (reports / "summary.md").read_text()
    absolute = re.search(
        r"Largest z-attributable absolute gain \(`gain_z_nats_seq`\): \*\*(\w+)\*\*", summary
    )
    fractional = re.search(r"Largest fractional gain \(`frac_gain_pop`\): \*\*(\w+)\*\*", summary)
    gross = re.search(
        r"Largest gross absolute gain [^`]*\(`gain_gross_nats_seq`\): \*\*(\w+)\*\*", summary
    )
    assert absolute and absolute.group(1) == "example_inverse"
    assert fractional and fractional.group(1) == "token_sum"
    gains = pd.read_csv(reports / "tables" / "gains.csv")
    gross_rows = gains[(gains["metric"] == "gain_gross_nats_seq") & (gains["variant"] != "oracle")]
    assert gross and gross.group(1) == gross_rows.sort_values("mean").iloc[-1]["variant"]
    # Far-apart constructed gains: the winners' CIs must not overlap the runners-up'.
    assert summary.count("CIs do not overlap") >= 2


def test_plot_data_files(built: tuple[Params, Path]) -> None:
    params, reports = built
    rate = pd.read_csv(reports / "plots" / "rate_gain.csv")
    assert list(rate.columns) == ["variant", "seed", "kl_nats", "gain_z_nats_seq"]
    assert len(rate) == len(LISTED) * len(SEEDS)
    by_position = pd.read_csv(reports / "plots" / "gain_by_position.csv")
    assert list(by_position.columns) == ["variant", "position", "token_gain"]
    data = eval_frame(params, "token_sum").explode("token_gain")
    data["position"] = data.groupby(level=0).cumcount()
    expected = data.groupby("position")["token_gain"].apply(lambda g: g.astype(float).mean())
    ours = by_position[by_position["variant"] == "token_sum"].set_index("position")["token_gain"]
    assert ours.to_numpy() == pytest.approx(expected.to_numpy(), rel=1e-12)


def test_figures_are_valid_pngs(built: tuple[Params, Path]) -> None:
    _, reports = built
    for name in FIGURES:
        data = (reports / "figures" / name).read_bytes()
        assert data.startswith(PNG_MAGIC), name
        assert len(data) > MIN_PNG_BYTES, name
    assert all(f"figures/{name}" in (reports / "summary.md").read_text() for name in FIGURES)


def test_no_temporary_files_remain(built: tuple[Params, Path]) -> None:
    _, reports = built
    leftovers = [p for p in reports.rglob("*") if p.name.startswith(".") or p.suffix == ".tmp"]
    assert leftovers == []


def test_rerun_writes_identical_bytes(built: tuple[Params, Path]) -> None:
    params, reports = built
    before = {p: p.read_bytes() for p in reports.rglob("*") if p.is_file()}
    report_stage.run(params)
    after = {p: p.read_bytes() for p in reports.rglob("*") if p.is_file()}
    assert after == before


@pytest.mark.parametrize("missing_file", ["examples.parquet", "metrics.json"])
def test_missing_run_names_variant_seed_and_path(
    default_params_raw: dict, tmp_path: Path, missing_file: str
) -> None:
    params = make_params(default_params_raw, tmp_path)
    write_fake_runs(Path(params.paths.eval_dir))
    missing = run_dir(params.paths.eval_dir, "token_sum", 1) / missing_file
    missing.unlink()
    with pytest.raises(
        DataError, match=r"variant 'token_sum', seed 1 .*" + re.escape(str(missing))
    ):
        report_stage.run(params)
    assert not Path(params.paths.reports_dir).exists()
