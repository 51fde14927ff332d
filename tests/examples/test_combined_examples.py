"""Every combined study committed under reports/examples is what its README's `zgain combine`
command makes from the committed parts: claims.csv, runs.csv and summary.md byte-identical."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from conftest import REPO_ROOT
from typer.testing import CliRunner

from zgain.cli.app import app
from zgain.cli.parts import CLAIMS_FILE, RUNS_FILE, SUMMARY_FILE


def combine_commands() -> list[tuple[str, list[str]]]:
    """(study, arguments) of every `zgain combine` line in the studies' READMEs (backslash
    continuations joined)."""
    found = []
    for page in sorted((REPO_ROOT / "studies").glob("*/README.md")):
        text = page.read_text().replace("\\\n", " ")
        for line in text.splitlines():
            words = shlex.split(line.strip()) if "zgain combine" in line else []
            if words[:2] == ["zgain", "combine"]:
                found.append((page.parent.name, words[2:]))
    return found


COMMANDS = combine_commands()


def test_every_committed_combined_table_has_its_command() -> None:
    outs = {args[args.index("--out") + 1] for _, args in COMMANDS}
    committed = {
        p.parent.relative_to(REPO_ROOT).as_posix()
        for p in (REPO_ROOT / "reports" / "examples").glob(f"*/{CLAIMS_FILE}")
    }
    assert committed, "no combined table under reports/examples"
    assert committed <= outs, f"combined tables no README's zgain combine makes: {committed - outs}"


@pytest.mark.parametrize(("study", "args"), COMMANDS, ids=[name for name, _ in COMMANDS])
def test_a_combined_example_is_its_parts_combined(
    study: str, args: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = Path(args[args.index("--out") + 1])
    committed = REPO_ROOT / out
    if not (committed / CLAIMS_FILE).is_file():
        pytest.skip(f"{study}: no combined table committed yet")
    monkeypatch.chdir(REPO_ROOT)
    again = args[: args.index("--out")] + ["--out", str(tmp_path)]
    result = CliRunner().invoke(app, ["combine", *again])
    assert result.exit_code == 0, result.output
    for name in (CLAIMS_FILE, RUNS_FILE, SUMMARY_FILE):
        assert (tmp_path / name).read_bytes() == (committed / name).read_bytes(), f"{out}/{name}"
