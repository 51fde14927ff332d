"""The import closure of a stage and its code digest (zgain.core.closure)."""

from __future__ import annotations

from pathlib import Path

import pytest

from zgain.core.closure import imported_closure, stage_code_digest
from zgain.core.errors import DataError


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write(
        tmp_path,
        {
            "stages/s.py": "from zgain.pkg.a import f\ntry:\n    pass\nexcept ValueError:\n"
            "    from zgain.pkg.messages import m\n",
            "src/zgain/__init__.py": "",
            "src/zgain/pkg/__init__.py": "X = 1\n",
            "src/zgain/pkg/a.py": "from zgain.pkg.b import g\n",
            "src/zgain/pkg/b.py": "def g(): return 1\n",
            "src/zgain/pkg/messages.py": "m = 'a message'\n",
        },
    )


def test_closure_follows_imports_and_skips_error_paths_and_empty_inits(project: Path) -> None:
    assert imported_closure(project, project / "stages" / "s.py") == {
        "src/zgain/pkg/__init__.py",
        "src/zgain/pkg/a.py",
        "src/zgain/pkg/b.py",
    }


def test_digest_changes_exactly_when_an_imported_file_does(project: Path) -> None:
    before = stage_code_digest(project, "s")
    assert before["stage"] == "s" and list(before["files"]) == sorted(before["files"])
    write(project, {"src/zgain/pkg/messages.py": "m = 'another message'\n"})
    assert stage_code_digest(project, "s") == before  # not imported outside an error path
    write(project, {"src/zgain/pkg/b.py": "def g(): return 2\n"})
    after = stage_code_digest(project, "s")
    changed = {f for f in after["files"] if after["files"][f] != before["files"][f]}
    assert changed == {"src/zgain/pkg/b.py"}


def test_a_missing_imported_file_is_named(project: Path) -> None:
    (project / "src" / "zgain" / "pkg" / "b.py").unlink()
    with pytest.raises(DataError, match=r"b\.py: imported by a stage but not found"):
        stage_code_digest(project, "s")
