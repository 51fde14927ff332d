"""Atomic writes: temporaries git and DVC ignore, swept by the owning stage; directory swaps."""

from __future__ import annotations

import fnmatch
import json
from pathlib import Path

import pytest
from conftest import REPO_ROOT

from zgain.core.io import (
    TMP_SUFFIX,
    atomic_dir,
    atomic_path,
    replaced_dir,
    sweep_temporaries,
    write_json,
)


class Interrupted(RuntimeError):
    pass


def ignore_patterns(name: str) -> list[str]:
    lines = (REPO_ROOT / name).read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def temporaries(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.name.endswith(TMP_SUFFIX))


def test_an_interrupted_write_leaves_the_target_and_no_temporary(tmp_path):
    target = tmp_path / "out" / "metrics.json"
    write_json({"a": 1}, target)
    with pytest.raises(Interrupted), atomic_path(target) as tmp:
        tmp.write_text("half")
        raise Interrupted
    assert json.loads(target.read_text()) == {"a": 1}
    assert temporaries(tmp_path) == []


@pytest.mark.parametrize("ignore_file", [".gitignore", ".dvcignore"])
def test_temporaries_are_ignored_by_git_and_dvc(tmp_path, ignore_file):
    with atomic_path(tmp_path / "seed0.pt") as tmp:
        name = tmp.name
    with atomic_dir(tmp_path / "reports") as built:
        dir_name = built.name
    assert name.startswith(".seed0.pt.") and dir_name.startswith(".reports.")
    patterns = ignore_patterns(ignore_file)
    for leftover in (name, dir_name):
        assert any(fnmatch.fnmatch(leftover, p) for p in patterns), (leftover, patterns)


def _leave_temporaries(root: Path) -> dict[str, Path]:
    """What a killed stage leaves: temporaries beside a file output and inside a directory."""
    (root / "cvae" / "v").mkdir(parents=True)
    (root / "eval" / "v" / "seed0").mkdir(parents=True)
    left = {
        "beside": root / "cvae" / "v" / f".seed0.pt.x1{TMP_SUFFIX}",
        "other_output": root / "cvae" / "v" / f".seed1.pt.x2{TMP_SUFFIX}",
        "inside": root / "eval" / "v" / "seed0" / f".metrics.json.x3{TMP_SUFFIX}",
        "dir": root / f".reports.x4{TMP_SUFFIX}",
    }
    for kind, path in left.items():
        if kind == "dir":
            (path / "tables").mkdir(parents=True)
            (path / "tables" / "t.csv").write_text("x\n")
        else:
            path.write_text("half")
    (root / "cvae" / "v" / "seed0.pt").write_text("kept")
    return left


def test_sweeping_removes_only_the_temporaries_of_the_given_outputs(tmp_path):
    left = _leave_temporaries(tmp_path)
    removed = sweep_temporaries(
        tmp_path / "cvae" / "v" / "seed0.pt", tmp_path / "eval" / "v" / "seed0"
    )
    assert sorted(removed) == sorted([left["beside"], left["inside"]])
    assert not left["beside"].exists() and not left["inside"].exists()
    assert left["other_output"].exists()  # another stage's output: not ours to sweep
    assert left["dir"].is_dir()
    assert (tmp_path / "cvae" / "v" / "seed0.pt").read_text() == "kept"
    sweep_temporaries(tmp_path / "reports")  # reports/ does not exist yet: its build dir goes
    assert not left["dir"].exists()
    assert sweep_temporaries(tmp_path / "nowhere" / "x.json") == []


def _tree(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_text() for p in sorted(root.rglob("*")) if p.is_file()}


def test_atomic_dir_replaces_written_entries_and_keeps_the_rest(tmp_path):
    reports = tmp_path / "reports"
    (reports / "tables").mkdir(parents=True)
    (reports / "tables" / "old.csv").write_text("old\n")
    (reports / "summary.md").write_text("old summary")
    (reports / "notes.txt").write_text("the user's")
    with atomic_dir(reports) as built:
        (built / "tables").mkdir()
        (built / "tables" / "new.csv").write_text("new\n")
        (built / "summary.md").write_text("new summary")
    assert _tree(reports) == {
        "notes.txt": "the user's",
        "summary.md": "new summary",
        "tables/new.csv": "new\n",
    }
    assert temporaries(tmp_path) == []


def test_a_failed_build_leaves_the_previous_directory_whole(tmp_path):
    reports = tmp_path / "reports"
    (reports / "tables").mkdir(parents=True)
    (reports / "tables" / "old.csv").write_text("old\n")
    before = _tree(reports)
    with pytest.raises(Interrupted), atomic_dir(reports) as built:
        (built / "tables").mkdir()
        (built / "tables" / "new.csv").write_text("new\n")
        raise Interrupted
    assert _tree(reports) == before
    assert temporaries(tmp_path) == []


def test_replaced_dir_swaps_the_folder_whole_and_only_on_success(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "stale.txt").write_text("old")
    (out / "kept.txt").write_text("old")
    with pytest.raises(RuntimeError), replaced_dir(out) as built:
        (built / "kept.txt").write_text("new")
        raise RuntimeError("the block failed")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no temporary left
    assert (out / "stale.txt").read_text() == "old" and (out / "kept.txt").read_text() == "old"
    with replaced_dir(out) as built:
        (built / "kept.txt").write_text("new")
    assert sorted(p.name for p in out.iterdir()) == ["kept.txt"]  # nothing stale survives
    assert (out / "kept.txt").read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
