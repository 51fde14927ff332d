"""`zgain stability-report` and `zgain worlds-report` without `--out` write to the committed
example folder: they refuse when a file they would write there is tracked by git, and name the
files and the option that overrides the refusal."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from zgain.cli.app import app

VIEWS = {
    "stability-report": ("reports/examples/stability", "summary.md"),
    "worlds-report": ("reports/examples/worlds", "worlds.csv"),
}


def git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture
def checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git checkout that commits one file of each view's default folder."""
    git("init", "-q", cwd=tmp_path)
    for folder, name in VIEWS.values():
        path = tmp_path / folder / name
        path.parent.mkdir(parents=True)
        path.write_text("committed\n")
        git("add", str(path), cwd=tmp_path)
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "views", cwd=tmp_path)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("command", sorted(VIEWS))
def test_the_default_folder_is_refused_when_git_tracks_its_files(
    command: str, checkout: Path
) -> None:
    folder, name = VIEWS[command]
    result = CliRunner().invoke(app, [command, "run_a", "run_b"])
    assert result.exit_code == 2
    assert f"would overwrite committed files ({folder}/{name})" in result.output
    assert f"--out {folder}" in result.output
    assert (checkout / folder / name).read_text() == "committed\n"


@pytest.mark.parametrize("command", sorted(VIEWS))
def test_an_explicit_out_or_an_untracked_default_passes_the_guard(
    command: str, checkout: Path
) -> None:
    folder, _ = VIEWS[command]
    explicit = CliRunner().invoke(app, [command, "--out", folder, "run_a", "run_b"])
    git("rm", "-q", "--cached", "-r", "reports", cwd=checkout)
    untracked = CliRunner().invoke(app, [command, "run_a", "run_b"])
    for result in (explicit, untracked):
        # past the guard: the missing report folders are what stops it
        assert "would overwrite" not in result.output
        assert "run_a: not a finished" in result.output
