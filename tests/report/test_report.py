"""The report stage end to end on fake runs: what it reads, what it writes, how it fails.

See docs/method.md#evaluation-quantities; the fake numbers are described in report_fakes.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from report_fakes import HEADLINE, LOW, REMOVED, WEIGHTS, build, make_params, write_study

from stages import report as report_stage
from zgain.core.errors import DataError
from zgain.core.runs import Run
from zgain.params import Params
from zgain.results.load.runs import load_results

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
MIN_PNG_BYTES = 5_000
EXPECTED_FILES = {
    "summary.md",
    "details.md",
    "diagnostics.md",
    "metrics.json",
    "capture.json",
    *(
        f"tables/{name}.csv"
        for name in (
            "decomposition",
            "fractional",
            "recovery",
            "localization",
            "posterior",
            "diagnostics",
            "information_by_position",
            "information_by_strategy",
            "runs",
            "rate_check",
            "frontier",
            "decomposition_rate1.0",
            "decomposition_rate2.5",
            "adjustment",
            "verdicts",
            "half_widths",
            "plateau",
            "procedure",
            "bases",
            "mismatch",
        )
    ),
    "plots/frontier.csv",
    "plots/information_by_position.csv",
    *(f"plots/learning_{q}.csv" for q in ("kl", "beta", "recon", "val_z_information")),
    "figures/frontier.png",
    "figures/frontier_top.png",
    "figures/forest.png",
    "figures/gain_decomposition.png",
    "figures/information_by_position.png",
    "figures/learning_curves.png",
}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Params, Path]:
    root = tmp_path_factory.mktemp("report")
    params = make_params(root)
    write_study(params)
    # The removed variant's outputs stay on disk, even broken: they must never be read.
    (Run(REMOVED, HEADLINE, 0, 0).eval_dir(params.paths.eval_dir) / "metrics.json").write_text(
        "not json"
    )
    report_stage.run(params)
    return params, Path(params.paths.reports_dir)


def files(reports: Path) -> dict[str, bytes]:
    return {str(p.relative_to(reports)): p.read_bytes() for p in reports.rglob("*") if p.is_file()}


def test_writes_exactly_the_report_files(built: tuple[Params, Path]) -> None:
    _, reports = built
    assert set(files(reports)) == EXPECTED_FILES


def test_removed_variant_is_not_read(built: tuple[Params, Path]) -> None:
    _, reports = built
    for name, data in files(reports).items():
        if not name.endswith(".png"):
            assert REMOVED not in data.decode(), name
    metrics = json.loads((reports / "metrics.json").read_text())
    assert list(metrics["variants"]) == list(WEIGHTS)


def test_figures_are_pngs_and_named_in_the_summary(built: tuple[Params, Path]) -> None:
    """Every figure is shown by the summary or one of its views, which the summary links."""
    _, reports = built
    summary = (reports / "summary.md").read_text()
    assert "(details.md)" in summary and "(diagnostics.md)" in summary
    summary += (reports / "details.md").read_text() + (reports / "diagnostics.md").read_text()
    for name in (n for n in EXPECTED_FILES if n.startswith("figures/")):
        data = (reports / name).read_bytes()
        assert data.startswith(PNG_MAGIC) and len(data) > MIN_PNG_BYTES, name
        assert f"({name})" in summary


def test_rerun_writes_identical_bytes_and_removes_stale_files(built: tuple[Params, Path]) -> None:
    params, reports = built
    before = files(reports)
    stale = reports / "tables" / "paired_wilcoxon.csv"  # written by an older report
    stale.write_text("old")
    report_stage.run(params)
    assert files(reports) == before
    leftovers = [p for p in reports.rglob("*") if p.name.startswith(".") or p.suffix == ".tmp"]
    assert leftovers == []


@pytest.mark.parametrize("missing_file", ["examples.parquet", "metrics.json"])
def test_missing_run_names_the_dvc_command(tmp_path: Path, missing_file: str) -> None:
    params = make_params(tmp_path)
    write_study(params)
    missing = Run("token_sum", LOW, 1, 0).eval_dir(params.paths.eval_dir) / missing_file
    missing.unlink()
    pattern = re.escape(str(missing)) + r".*" + re.escape("`dvc repro evaluate@0-token_sum-1`")
    with pytest.raises(DataError, match=pattern):
        report_stage.run(params)
    assert not Path(params.paths.reports_dir).exists()


def test_stale_metrics_without_a_new_key_fail(tmp_path: Path) -> None:
    params = make_params(tmp_path)
    write_study(params)
    path = Run("token_mean", HEADLINE, 2, 0).eval_dir(params.paths.eval_dir) / "metrics.json"
    metrics = json.loads(path.read_text())
    del metrics["z_information"]
    path.write_text(json.dumps(metrics))
    with pytest.raises(DataError, match=r"z_information.*evaluate@0-token_mean-2"):
        report_stage.run(params)


def test_runs_disagreeing_on_the_split_fail(tmp_path: Path) -> None:
    params = make_params(tmp_path)
    write_study(params)
    path = Run("example_inverse", HEADLINE, 0, 0).eval_dir(params.paths.eval_dir) / "metrics.json"
    metrics = json.loads(path.read_text())
    metrics["oracle_info"] += 1.0
    path.write_text(json.dumps(metrics))
    with pytest.raises(DataError, match="oracle_info"):
        report_stage.run(params)


def test_reserved_variant_names_are_refused(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="reserved"):
        load_results(tmp_path, ("token_mean", "oracle"), (0,), 1.0, base=0)


def test_one_seed_report_builds(tmp_path: Path) -> None:
    params = build(tmp_path, seeds=(0,))
    assert set(files(Path(params.paths.reports_dir))) == EXPECTED_FILES


def test_missing_training_curve_names_the_file(tmp_path: Path) -> None:
    params = make_params(tmp_path)
    write_study(params)
    live = Run("token_sum", HEADLINE, 0, 0).live_dir(params.paths.cvae_live)
    curve = live / "plots/metrics/kl.tsv"
    curve.unlink()
    with pytest.raises(DataError, match=re.escape(str(curve))):
        report_stage.run(params)
