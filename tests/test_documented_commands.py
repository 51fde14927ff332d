"""Every command the README and docs/ show runs against today's project.

Each shell block of README.md and docs/*.md runs in bash with `dvc`, `zgain`, `python`, `make`,
`bash`, `git`, `cd`, `pip` and `cat` replaced by functions that only record their arguments, so
loops and arrays (the λ recipe) expand exactly as they would for a reader. Every recorded command is
then checked without running anything heavy: dvc's own parser accepts its flags; `dvc repro` /
`dvc exp run` targets are stages (or stage groups) of dvc.yaml; every `-S` recipe, applied to a
copy of params.yaml by DVC's own override code (each value of a sweep in turn), passes
`check_params`; `dvc dag` targets are stages and `dvc plots show` targets plots of dvc.yaml;
each `--keep` alternative names a column of `dvc exp show`; `zgain` flags parse
(typer, without running); `python -m` modules, `bash` scripts, `cat` files and `make` targets
exist.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest
import typer
from conftest import REPO_ROOT

PAGES = (REPO_ROOT / "README.md", *sorted((REPO_ROOT / "docs").glob("*.md")))
SHELL_FENCES = {"bash", "sh", "shell", "console"}
COMMANDS = ("dvc", "zgain", "python", "make", "bash", "git", "cd", "pip", "cat")
# Unlabelled fences and indented blocks are diagrams or output unless they start with a command.
LEADING = re.compile(r"^(?:[A-Z_]+=\S+\s+)*(dvc|zgain|python|make|bash|cat)(?:\s|$)")
# What a reader substitutes in the docs' placeholders (docs/scale.md's worker and job scripts).
PLACEHOLDERS = {
    "I": "0",
    "N": "2",
    "EXP": "myexp",
    "SCRATCH": "/scratch",
    "ZGAIN_GIT": "https://example.org/zgain.git",
    "SLURM_ARRAY_TASK_ID": "0",
    "SLURM_ARRAY_TASK_COUNT": "8",
    "SLURM_CPUS_PER_TASK": "8",
}
BASH = shutil.which("bash") or "/bin/bash"
FIELD, RECORD = "\x1f", "\x1e"
PRELUDE = f"""set -euo pipefail
record() {{ printf '%s{FIELD}' "$@" >> "$ZGAIN_DOC_LOG"; printf '{RECORD}' >> "$ZGAIN_DOC_LOG"; }}
for c in {" ".join(COMMANDS)}; do eval "$c() {{ record $c \\"\\$@\\"; }}"; done
command_not_found_handle() {{ record '?' "$@"; }}
"""


@dataclass(frozen=True)
class Block:
    """One shell block of a page: where it starts (1-based line) and its text."""

    page: str
    line: int
    text: str

    def __str__(self) -> str:
        return f"{self.page}:{self.line}"


def shell_blocks(page: Path, root: Path = REPO_ROOT) -> list[Block]:
    """The fenced bash/sh blocks of a page, and unlabelled or indented ones that start with a
    command (the others are diagrams, params or printed output)."""
    name = page.relative_to(root).as_posix()
    blocks: list[Block] = []
    lines = page.read_text().splitlines()
    i = 0
    while i < len(lines):
        fence = re.match(r"^ *```(\w*)", lines[i])
        indented = lines[i].startswith("    ") and (i == 0 or not lines[i - 1].strip())
        if fence:
            end = next(j for j in range(i + 1, len(lines)) if lines[j].lstrip().startswith("```"))
            body = "\n".join(lines[i + 1 : end])
            first = next((s.strip() for s in lines[i + 1 : end] if s.strip()[:1] not in "#"), "")
            if fence.group(1) in SHELL_FENCES or (not fence.group(1) and LEADING.match(first)):
                blocks.append(Block(name, i + 2, body))
            i = end + 1
        elif indented and LEADING.match(lines[i].strip()):
            end = next((j for j in range(i, len(lines)) if not lines[j].startswith("    ")), None)
            body = "\n".join(s[4:] for s in lines[i : end or len(lines)])
            blocks.append(Block(name, i + 1, body))
            i = end or len(lines)
        else:
            i += 1
    return blocks


def recorded_commands(text: str, cwd: Path) -> list[list[str]]:
    """The argument lists the block's commands receive once bash has expanded them."""
    log = cwd / ".commands"
    log.write_text("")
    env = {"PATH": str(cwd / "no-commands"), "HOME": str(cwd), "ZGAIN_DOC_LOG": str(log)}
    done = subprocess.run(
        [BASH, "-c", PRELUDE + text],
        cwd=cwd,
        env=env | PLACEHOLDERS,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, f"bash stopped in the block: {done.stderr.strip()}"
    return [record.split(FIELD)[:-1] for record in log.read_text().split(RECORD) if record.strip()]


@cache
def dvc_repo():
    from dvc.repo import Repo

    # uninitialized: a checkout without git (an archive) resolves stage names as well
    return Repo(str(REPO_ROOT), uninitialized=True)


def stage_problems(targets: list[str]) -> list[str]:
    """A target that names no stage or stage group of dvc.yaml (as DVC itself resolves it)."""
    from dvc.stage.exceptions import StageNotFound

    out = []
    for target in targets:
        try:
            dvc_repo().stage.collect(target)
        except StageNotFound as err:
            out.append(str(err))
    return out


def params_problems(overrides: list[str], queue: bool) -> list[str]:
    """check_params on params.yaml with the -S overrides, each value of a sweep in turn."""
    from dvc.exceptions import InvalidArgumentError
    from dvc.utils.cli_parse import to_path_overrides
    from dvc.utils.hydra import apply_overrides, get_hydra_sweeps, to_hydra_overrides

    from stages.check_params import problems

    by_file = to_path_overrides(overrides)
    if set(by_file) != {"params.yaml"}:
        return [f"-S names a file other than params.yaml: {sorted(by_file)}"]
    sweep = any(o.is_sweep_override() for o in to_hydra_overrides(by_file["params.yaml"]))
    if sweep and not queue:
        return ["a sweep (a=x,y) needs --queue"]
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for point in get_hydra_sweeps(by_file) if sweep else [by_file]:
            copy = Path(tmp) / "params.yaml"
            shutil.copyfile(REPO_ROOT / "params.yaml", copy)
            try:
                apply_overrides(copy, point["params.yaml"])
            except InvalidArgumentError as err:  # what `dvc exp run` itself refuses
                out.append(f"{point['params.yaml']}: {err}: {err.__cause__}".replace("\n", " "))
                continue
            out += [f"{point['params.yaml']}: {line}" for line in problems(copy)[1]]
    return out


def exp_show_columns() -> set[str]:
    """The columns `dvc exp show` can show: the experiment, every param key path of
    params.yaml (dotted) and every key of the DVC metrics files dvc.yaml declares."""
    import json

    import yaml

    def walk(node: object, prefix: str) -> Iterator[str]:
        if isinstance(node, dict):
            for key, value in node.items():
                yield from walk(value, f"{prefix}{key}.")
        yield prefix.rstrip(".")

    columns = {"Experiment", *walk(yaml.safe_load((REPO_ROOT / "params.yaml").read_text()), "")}
    for stage in dvc_repo().index.stages:
        for out in stage.outs:
            path = REPO_ROOT / str(out.def_path)
            if out.metric and path.is_file():
                columns |= set(walk(json.loads(path.read_text()), "")) - {""}
    return columns


def keep_problems(pattern: str) -> list[str]:
    """Each alternative of `^(a|b|c)$` (or the whole pattern) must name a column."""
    columns = exp_show_columns()
    whole = re.fullmatch(r"\^\((.*)\)\$", pattern)
    parts = whole[1].split("|") if whole else [pattern]
    return [
        f"--keep {part!r} names no column of dvc exp show"
        for part in parts
        if not any(re.fullmatch(part, c) if whole else re.search(part, c) for c in columns)
    ]


def dvc_problems(argv: list[str]) -> list[str]:
    from dvc.cli import DvcParserError, parse_args

    try:
        args = parse_args(argv)
    except (DvcParserError, SystemExit) as err:
        return [f"dvc does not accept the arguments ({type(err).__name__})"]
    out: list[str] = []
    command = argv[: 2 if argv[0] in {"exp", "plots", "metrics", "queue", "stage"} else 1]
    if command in (["repro"], ["exp", "run"]):
        out += stage_problems(args.targets)
    if command == ["exp", "run"] and args.set_param:
        out += params_problems(args.set_param, args.queue)
    if command == ["dag"] and args.target:
        out += stage_problems([args.target])
    if command == ["plots", "show"]:
        out += [f"no plot {t!r} in dvc.yaml and no such file" for t in plot_misses(args.targets)]
    if command == ["exp", "show"]:
        out += [problem for pattern in args.keep or [] for problem in keep_problems(pattern)]
    return out


def plot_misses(targets: list[str]) -> list[str]:
    """Targets of `dvc plots show` that are neither a plot id of dvc.yaml nor a file."""
    import yaml

    declared = yaml.safe_load((REPO_ROOT / "dvc.yaml").read_text()).get("plots", [])
    ids = {key for entry in declared for key in (entry if isinstance(entry, dict) else [entry])}
    return [t for t in targets if t not in ids and not (REPO_ROOT / t).exists()]


def zgain_problems(argv: list[str]) -> list[str]:
    """The subcommand exists and its flags parse (types and ranges), without running it."""
    from zgain.cli.app import app

    commands = typer.main.get_command(app).commands  # type: ignore[attr-defined]
    if not argv or argv[0] not in commands:
        return [f"no such zgain command: {argv[:1]}"]
    try:
        commands[argv[0]].make_context(f"zgain {argv[0]}", argv[1:])
    except typer.TyperException as err:  # click's usage errors, as typer vendors them
        return [err.format_message()]  # type: ignore[attr-defined]
    return []


def python_problems(argv: list[str]) -> list[str]:
    import importlib.util

    if argv[:1] == ["-m"] and len(argv) > 1:
        module = argv[1]
        try:
            found = importlib.util.find_spec(module) is not None
        except ModuleNotFoundError:
            found = False
        return [] if found else [f"no module {module}"]
    if argv and not (REPO_ROOT / argv[0]).is_file():
        return [f"no file {argv[0]}"]
    return []


def make_problems(argv: list[str]) -> list[str]:
    makefile = (REPO_ROOT / "Makefile").read_text()
    return [f"no make target {t!r}" for t in argv if not re.search(rf"^{t}:", makefile, re.M)]


def command_problems(argv: list[str]) -> list[str]:
    """What is wrong with one recorded command (an empty list: nothing)."""
    name, args = argv[0], argv[1:]
    if name == "dvc":
        return dvc_problems(args)
    if name == "zgain":
        return zgain_problems(args)
    if name == "python":
        return python_problems(args)
    if name == "make":
        return make_problems(args)
    if name == "bash":
        return [] if args and (REPO_ROOT / args[0]).is_file() else [f"no script {args[:1]}"]
    if name == "cat":
        return [f"no file {a}" for a in args if not (REPO_ROOT / a).is_file()]
    if name in {"git", "cd", "pip"}:
        return []
    return [f"a command the docs checker does not know: {args}"]


def block_problems(block: Block, cwd: Path) -> list[str]:
    return [
        f"{block}: `{' '.join(argv)}`: {problem}"
        for argv in recorded_commands(block.text, cwd)
        for problem in command_problems(argv)
    ]


BLOCKS = [block for page in PAGES for block in shell_blocks(page)]


@pytest.fixture(autouse=True)
def _in_repo(monkeypatch: pytest.MonkeyPatch) -> None:
    # check_params reads a pairs file relative to the repository, as the stage does
    monkeypatch.chdir(REPO_ROOT)


def test_the_docs_hold_shell_blocks_of_every_kind_checked() -> None:
    assert len(BLOCKS) >= 15
    texts = "\n".join(block.text for block in BLOCKS)
    for command in ("dvc exp run -S", "dvc repro", "zgain ", "make ", "dvc exp show"):
        assert command in texts


@pytest.mark.parametrize("block", BLOCKS, ids=str)
def test_every_documented_command_runs_against_the_project(block: Block, tmp_path: Path) -> None:
    assert block_problems(block, tmp_path) == []


INLINE = re.compile(r"`(?:\.venv/bin/)?(python -m [\w.]+|zgain [a-z][\w-]*)")


def test_every_module_and_subcommand_named_in_running_text_exists() -> None:
    """Commands quoted inline often carry placeholders (`<clone>`) or leave out arguments; their
    module or zgain subcommand must still exist."""
    from zgain.cli.app import app

    named = {m for page in PAGES for m in INLINE.findall(page.read_text())}
    modules = {m.split()[2] for m in named if m.startswith("python")}
    subcommands = {m.split()[1] for m in named if m.startswith("zgain")}
    assert len(modules) > 3 and len(subcommands) > 3
    missing = [problem for m in sorted(modules) for problem in python_problems(["-m", m])]
    known = typer.main.get_command(app).commands  # type: ignore[attr-defined]
    assert missing + sorted(subcommands - set(known)) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("dvc repro train_cvae@token_sum-0", "not found"),
        ("dvc exp run -S '~cvae.variants.token_mean'", "token_mean"),
        ("dvc exp run -S cvae.common.betaa=0.1", "use +cvae.common.betaa=0.1"),
        ("dvc exp run -S 'cvae.seeds=[0],[0,1]'", "needs --queue"),
        ("dvc exp run --queue -S 'data.noise=0.1,1.5'", "data.noise: must be in [0, 1)"),
        ("dvc exp show --keep 'cvae\\.nothing'", "names no column"),
        ("dvc exp show --drop '.*' --keep '^(Experiment|token_mean|tokn_sum)$'", "'tokn_sum'"),
        ("cat reports/nothing.json", "no file"),
        ("dvc dag normalizer@9", "not found"),
        ("dvc plots show frontier_z_information frontier_nothing", "'frontier_nothing'"),
        ("dvc exp show --only-changd", "does not accept"),
        ("zgain sweep-report --outt x", "No such option"),
        ("zgain shard --index 0 --count 0", "count"),
        ("zgain sweep-reprt", "no such zgain command"),
        ("python -m stages.no_such_stage", "no module"),
        ("make reproo", "no make target"),
        ("bash examples/nothing.sh", "no script"),
        ('for v in a b; do S+=(-S "x.$v=1"); done\ndvc exp run "${S[@]}"', "use +x.a=1"),
        ("dvc exp run -S +cvae.common.betaa=0.1", "cvae.common.betaa: unknown key"),
        ("rm -rf data", "does not know"),
    ],
)
def test_the_checker_refuses_a_broken_command(text: str, expected: str, tmp_path: Path) -> None:
    problems = block_problems(Block("broken.md", 1, text), tmp_path)
    assert problems, text
    assert any(expected in problem for problem in problems), problems


def test_a_block_that_stops_in_bash_fails(tmp_path: Path) -> None:
    with pytest.raises(AssertionError, match="bash stopped"):
        recorded_commands('dvc exp run -S "x=$UNSET_BY_THE_DOCS"', tmp_path)


def test_blocks_are_found_by_fence_and_indentation(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "text\n\n```bash\ndvc repro\n```\n\n```\ngenerate ─► report\n```\n\n```yaml\na: 1\n```\n"
        "\n    zgain check \\\n        --x\n\nafter\n"
    )
    blocks = shell_blocks(page, tmp_path)
    assert [(b.line, b.text) for b in blocks] == [(4, "dvc repro"), (15, "zgain check \\\n    --x")]
