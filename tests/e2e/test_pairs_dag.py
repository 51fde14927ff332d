"""The whole DAG under real `dvc` on a small pairs file, without and with oracle columns: which
report sections each keeps, and that the pairs file is a dependency of `generate`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import tiny_params_raw
from dvc_project import commit, head, make_project, ran_stages, reset, sh
from pairs_data import pairs_params, write_toy_pairs

pytestmark = pytest.mark.e2e

LEFT_OUT = "## Left out for this data"


def pairs_project(root: Path, *, oracle: bool) -> Path:
    raw = tiny_params_raw()
    raw["data"] = pairs_params("pairs/toy.tsv", oracle=oracle)
    raw["cvae"]["seeds"] = [0]  # one group per variant: the sections, not the verdicts, matter
    raw["base"]["seeds"] = [0]  # one base: no comparisons over bases
    raw["cvae"]["confirm"]["bases"] = []
    if not oracle:  # the headline is the middle rate: check_params refuses an even number
        raw["cvae"]["rates"] = [0.5, 1.0, 2.0]
    repo = make_project(root, raw)
    write_toy_pairs(repo / "pairs" / "toy.tsv")
    commit(repo, "toy pairs")
    return repo


@pytest.fixture(scope="module")
def built_no_oracle(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    repo = pairs_project(tmp_path_factory.mktemp("pairs-no-oracle"), oracle=False)
    sh(repo, "dvc", "repro", "-q")
    commit(repo, "reproduced")
    return repo, head(repo)


@pytest.fixture
def no_oracle(built_no_oracle: tuple[Path, str]) -> Iterator[Path]:
    """The reproduced project without oracle columns, put back after each test (any order)."""
    repo, baseline = built_no_oracle
    yield repo
    reset(repo, baseline)


@pytest.fixture(scope="module")
def with_oracle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = pairs_project(tmp_path_factory.mktemp("pairs-oracle"), oracle=True)
    sh(repo, "dvc", "repro", "-q")
    return repo


def tables(repo: Path) -> set[str]:
    return {p.stem for p in (repo / "reports" / "tables").iterdir()}


def test_without_an_oracle_the_report_names_what_it_leaves_out(no_oracle: Path) -> None:
    summary = (no_oracle / "reports" / "summary.md").read_text()
    assert {"decomposition", "fractional", "posterior", "frontier", "verdicts"} <= tables(no_oracle)
    assert not {"recovery", "localization"} & tables(no_oracle)
    left_out = summary.split(LEFT_OUT, 1)[1].split("\n## ", 1)[0]
    for named in ("capture", "Strategy recovery beyond x", "Localization of the z-information"):
        assert named in left_out
    assert "## Gain decomposition at each target rate" in summary
    body = summary.split("## Rates reached", 1)[1].split("## Glossary", 1)[0]
    headers = [line for line in body.splitlines() if line.startswith("| row |")]
    assert headers and not any("`capture`" in line for line in headers)
    assert "`probe_accuracy`" not in body
    assert "the middle listed rate" in summary
    metrics = json.loads((no_oracle / "reports" / "metrics.json").read_text())
    assert metrics["oracle_info"] is None
    assert all(v["capture"] is None for v in metrics["variants"].values())
    assert all(v["z_information"] is not None for v in metrics["variants"].values())
    base = json.loads((no_oracle / "models" / "bases" / "0" / "base.json").read_text())["metrics"]
    assert "test_oracle_nll" not in base and 0 <= base["test_sequence_error_rate"] <= 1


def test_with_oracle_columns_capture_and_the_oracle_rows_return(with_oracle: Path) -> None:
    summary = (with_oracle / "reports" / "summary.md").read_text()
    left_out = summary.split(LEFT_OUT, 1)[1].split("\n## ", 1)[0]
    assert "need an oracle" not in left_out and "Strategy recovery beyond x" in left_out
    assert "| oracle |" in summary and "the one nearest the oracle's mean I*" in summary
    metrics = json.loads((with_oracle / "reports" / "metrics.json").read_text())
    assert metrics["oracle_info"] > 0
    assert all(v["capture"] is not None for v in metrics["variants"].values())


def test_editing_the_pairs_file_reruns_from_generate(no_oracle: Path) -> None:
    path = no_oracle / "pairs" / "toy.tsv"
    path.write_text(path.read_text() + "fedcb\tF E D C B\t0.0\t0.0\n")
    status = sh(no_oracle, "dvc", "status", "generate")
    assert "pairs" in status and "modified" in status
    out = sh(no_oracle, "dvc", "repro", "generate")
    assert ran_stages(out) == {"generate"}
