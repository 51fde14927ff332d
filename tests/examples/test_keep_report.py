"""examples/keep_report.sh keeps a finished study's report under reports/examples/<name>/."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from conftest import REPO_ROOT

SCRIPT = REPO_ROOT / "examples" / "keep_report.sh"


def repository(tmp_path: Path) -> Path:
    """A git repository holding the script, as this one does."""
    root = tmp_path / "repo"
    (root / "examples").mkdir(parents=True)
    shutil.copy(SCRIPT, root / "examples" / SCRIPT.name)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def finished_study(tmp_path: Path) -> Path:
    clone = tmp_path / "clone"
    (clone / "reports" / "tables").mkdir(parents=True)
    (clone / "reports" / "figures").mkdir()
    (clone / "reports" / "tables" / "runs.csv").write_text("variant\ntoken_mean\n")
    (clone / "reports" / "figures" / "frontier.png").write_bytes(b"png")
    links = "[docs/method.md#verdicts](../docs/method.md#verdicts); ![f](figures/frontier.png)"
    (clone / "reports" / "summary.md").write_text(f"rules in {links}\n")
    (clone / "reports" / "metrics.json").write_text("{}\n")
    (clone / "params.yaml").write_text("cvae: {seeds: [0, 1]}\n")
    return clone


def keep(root: Path, clone: Path, name: str) -> subprocess.CompletedProcess:
    args = ["bash", "examples/keep_report.sh", str(clone), name]
    return subprocess.run(args, cwd=root, capture_output=True, text=True)


def test_the_report_and_its_params_are_copied_and_links_point_to_docs(tmp_path: Path) -> None:
    root, clone = repository(tmp_path), finished_study(tmp_path)
    out = root / "reports" / "examples" / "seeds2"
    out.mkdir(parents=True)
    (out / "stale.csv").write_text("old\n")
    done = keep(root, clone, "seeds2")
    assert done.returncode == 0, done.stderr
    assert Path(done.stdout.strip()) == out
    assert sorted(p.name for p in out.iterdir()) == [
        "figures",
        "metrics.json",
        "params.yaml",
        "summary.md",
        "tables",
    ]
    assert (out / "tables" / "runs.csv").read_text() == "variant\ntoken_mean\n"
    summary = (out / "summary.md").read_text()
    assert "](../../../docs/method.md#verdicts)" in summary and "](figures/frontier.png)" in summary


def test_an_unfinished_study_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    root, clone = repository(tmp_path), finished_study(tmp_path)
    (clone / "reports" / "metrics.json").unlink()
    done = keep(root, clone, "seeds2")
    assert done.returncode == 2
    assert "reports/metrics.json not found: is" in done.stderr
    assert not (root / "reports").exists()


def test_a_report_kept_in_a_folder_of_examples_links_to_docs_from_its_depth(
    tmp_path: Path,
) -> None:
    root, clone = repository(tmp_path), finished_study(tmp_path)
    done = keep(root, clone, "worlds/late")
    assert done.returncode == 0, done.stderr
    out = root / "reports" / "examples" / "worlds" / "late"
    summary = (out / "summary.md").read_text()
    assert "](../../../../docs/method.md#verdicts)" in summary
    assert (out / "summary.md").parent.joinpath("../../../../docs").resolve() == root / "docs"
