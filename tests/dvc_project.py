"""A copy of the project in a temporary git + DVC repository, and real `dvc` run inside it.

Shared by the end-to-end tests (tests/e2e) and the fault-injection tests (tests/faults).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml
from conftest import REPO_ROOT

BIN = Path(sys.executable).parent
COPIED = ["dvc.yaml", "stages", "src", "pairs"]
IGNORE_FILES = [".gitignore", ".dvcignore"]


def run(cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Run a command in the copy with its own code and a quiet, telemetry-free dvc."""
    full_env = {
        **os.environ,
        "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": str(cwd / "src"),  # the copy's code, so edits in the copy take effect
        "GIT_AUTHOR_NAME": "zgain",
        "GIT_AUTHOR_EMAIL": "zgain@localhost",
        "GIT_COMMITTER_NAME": "zgain",
        "GIT_COMMITTER_EMAIL": "zgain@localhost",
        "DVC_NO_ANALYTICS": "1",
        **(env or {}),
    }
    return subprocess.run(args, cwd=cwd, env=full_env, capture_output=True, text=True)


def sh(cwd: Path, *args: str, env: dict[str, str] | None = None) -> str:
    done = run(cwd, *args, env=env)
    if done.returncode != 0:
        raise AssertionError(
            f"{' '.join(args)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
        )
    return done.stdout + done.stderr


def ran_stages(output: str) -> set[str]:
    return set(re.findall(r"Running stage '([^']+)'", output))


def commit(repo: Path, message: str) -> None:
    sh(repo, "git", "add", "-A")
    sh(repo, "git", "commit", "-qm", message)


def make_project(root: Path, params: dict) -> Path:
    """The project's code, dvc.yaml and ignore files under `root` with `params`, committed."""
    for name in COPIED:
        source = REPO_ROOT / name
        if source.is_dir():
            shutil.copytree(
                source, root / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info")
            )
        else:
            shutil.copy(source, root / name)
    (root / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    sh(root, "git", "init", "-q")
    sh(root, "dvc", "init", "-q")
    shutil.copy(REPO_ROOT / ".dvc" / "config", root / ".dvc" / "config")
    shutil.copytree(REPO_ROOT / ".dvc" / "plots", root / ".dvc" / "plots")
    for name in IGNORE_FILES:
        shutil.copy(REPO_ROOT / name, root / name)
    commit(root, "tiny project")
    return root


def head(repo: Path) -> str:
    """The commit the repository's HEAD points at."""
    return sh(repo, "git", "rev-parse", "HEAD").strip()


def reset(repo: Path, commit: str) -> None:
    """The repository back at `commit`: tracked files as committed, files a test added removed
    (a report's new tables), and every cached DVC output as that commit's dvc.lock records it.
    For a repository that ran its stages and committed DVC's .gitignore entries: `git clean`
    then spares the ignored outputs, and the cache holds every one of them."""
    sh(repo, "git", "reset", "-q", "--hard", commit)
    sh(repo, "git", "clean", "-qfd")
    sh(repo, "dvc", "checkout", "-q", "--force")


def set_param(repo: Path, key: str, value: object) -> None:
    """Set params key `a.b.c` to `value` in the repository's params.yaml."""
    params_file = repo / "params.yaml"
    params = yaml.safe_load(params_file.read_text())
    *parents, last = key.split(".")
    node = params
    for part in parents:
        node = node[part]
    node[last] = value
    params_file.write_text(yaml.safe_dump(params, sort_keys=False))
