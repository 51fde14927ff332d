"""The commands of README.md and docs/usage.md that train nothing run, and exit 0.

tests/test_documented_commands.py checks every documented command without running it. This
runs the ones that are cheap and write nothing that matters, each as a reader would:

- `cat` of a committed file, here;
- `zgain --help`, and `zgain <command> --help` for every zgain command the pages name, here;
- the read-only `dvc` views (`dvc dag`, `dvc params diff`, `dvc status`, `dvc exp show`,
  `dvc plots show`) in a temporary clone of the repository (`e2e`: real dvc).

Every other command trains or needs a completed run, and is named in NOT_RUN with the reason, so
a command added to the pages must be placed in one of these groups.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from conftest import REPO_ROOT
from dvc_project import run
from test_documented_commands import recorded_commands, shell_blocks

PAGES = (REPO_ROOT / "README.md", REPO_ROOT / "docs" / "usage.md")
ZGAIN = Path(sys.executable).parent / "zgain"
# dvc subcommands that only read the project (`dvc plots show` writes dvc_plots/, in the clone)
DVC_VIEWS = {("dag",), ("params", "diff"), ("status",), ("exp", "show"), ("plots", "show")}
NOT_RUN = {
    ("make",): "installs and trains (`make repro`, `make test`)",
    ("dvc", "repro"): "trains",
    ("dvc", "exp", "run"): "trains",
    ("dvc", "queue"): "trains the queued experiments",
    ("zgain", "check"): "needs a completed run (its --help runs)",
    ("zgain", "sweep-report"): "needs experiments (its --help runs)",
    ("zgain", "worlds-report"): "needs finished runs on several worlds (its --help runs)",
    ("zgain", "part"): "needs a finished part of a study (its --help runs)",
    ("zgain", "combine"): "needs the parts of a study (its --help runs)",
    ("cd",): "enters a clone the reader made; what runs there trains",
    ("dvc", "metrics", "show"): "reads the metrics of a completed run",
}


def documented() -> list[tuple[str, list[str]]]:
    """(page:line, argv) of every command of the pages' shell blocks, in order."""
    found = []
    with tempfile.TemporaryDirectory() as scratch:
        for page in PAGES:
            for block in shell_blocks(page):
                found += [
                    (str(block), argv) for argv in recorded_commands(block.text, Path(scratch))
                ]
    return found


COMMANDS = documented()


def group(argv: list[str]) -> str:
    """Where a command runs: 'here', 'clone' (dvc), or 'not run'."""
    if argv[0] == "cat":
        return "here"
    if argv[0] == "dvc" and any(tuple(argv[1 : 1 + len(v)]) == v for v in DVC_VIEWS):
        return "clone"
    if any(tuple(argv[: len(prefix)]) == prefix for prefix in NOT_RUN):
        return "not run"
    raise AssertionError(f"a documented command in no group: {argv}")


def ids(items: list[tuple[str, list[str]]]) -> list[str]:
    return [f"{where} {' '.join(argv)[:60]}" for where, argv in items]


def test_every_documented_command_is_run_or_says_why_not() -> None:
    groups = [group(argv) for _, argv in COMMANDS]
    assert {"here", "clone", "not run"} <= set(groups)


HERE = [(where, argv) for where, argv in COMMANDS if group(argv) == "here"]
SUBCOMMANDS = sorted({argv[1] for _, argv in COMMANDS if argv[0] == "zgain"})


@pytest.mark.parametrize(("where", "argv"), HERE, ids=ids(HERE))
def test_a_read_command_runs(where: str, argv: list[str]) -> None:
    done = subprocess.run(argv, cwd=REPO_ROOT, capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"{where}: {done.stderr}"
    assert done.stdout.strip()


def test_the_installed_zgain_runs() -> None:
    done = subprocess.run([str(ZGAIN), "--help"], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert all(command in done.stdout for command in SUBCOMMANDS)


@pytest.mark.parametrize("command", SUBCOMMANDS)
def test_each_zgain_commands_help_runs(command: str) -> None:
    """In process (the installed script's app), so that the imports are paid once."""
    from typer.testing import CliRunner

    from zgain.cli.app import app

    result = CliRunner().invoke(app, [command, "--help"])
    assert result.exit_code == 0, result.output
    assert "Usage:" in result.output


CLONE = [(where, argv) for where, argv in COMMANDS if group(argv) == "clone"]


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh clone of the committed repository: no data, no models, no DVC cache."""
    path = tmp_path_factory.mktemp("clone") / "zgain"
    subprocess.run(["git", "clone", "-q", str(REPO_ROOT), str(path)], check=True)
    return path


@pytest.mark.e2e
@pytest.mark.parametrize(("where", "argv"), CLONE, ids=ids(CLONE))
def test_a_dvc_view_runs_in_a_fresh_clone(where: str, argv: list[str], clone: Path) -> None:
    done = run(clone, *argv)
    assert done.returncode == 0, f"{where}: {done.stdout}{done.stderr}"
