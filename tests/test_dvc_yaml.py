"""dvc.yaml declares, for each stage, exactly the library code that stage imports."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import yaml
from conftest import REPO_ROOT

DVC_YAML = yaml.safe_load((REPO_ROOT / "dvc.yaml").read_text())


def module_file(module: str) -> str:
    """The file of a zgain module: `zgain.params` is a package, `zgain.core.io` a module."""
    path = "src/" + module.replace(".", "/")
    return f"{path}/__init__.py" if (REPO_ROOT / path).is_dir() else f"{path}.py"


def error_path_nodes(tree: ast.AST) -> set[int]:
    """Nodes inside an `except` handler: code that runs only when a stage fails (an error
    message), which cannot change a stage's output and so is no dependency of it."""
    return {
        id(node)
        for handler in ast.walk(tree)
        if isinstance(handler, ast.ExceptHandler)
        for node in ast.walk(handler)
    }


def zgain_imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    skipped = error_path_nodes(tree)
    found = set()
    for node in ast.walk(tree):
        module = node.module if isinstance(node, ast.ImportFrom) else None
        if module and module.startswith("zgain.") and id(node) not in skipped:
            found.add(module_file(module))
    # a package's __init__ runs before any of its modules (the empty ones change nothing)
    for file in list(found):
        parts = Path(file).parts
        for depth in range(3, len(parts)):
            init = Path(*parts[:depth], "__init__.py")
            if (REPO_ROOT / init).is_file() and (REPO_ROOT / init).stat().st_size:
                found.add(str(init))
    return found


def imported_closure(path: Path) -> set[str]:
    seen: set[str] = set()
    todo = [path]
    while todo:
        for module in zgain_imports(todo.pop()):
            if module not in seen:
                seen.add(module)
                todo.append(REPO_ROOT / module)
    return seen


@pytest.mark.parametrize("stage", sorted(DVC_YAML["stages"]))
def test_stage_deps_are_exactly_its_imports(stage: str) -> None:
    declared = DVC_YAML["stages"][stage]["deps"]
    assert f"stages/{stage}.py" in declared
    code = {d for d in declared if isinstance(d, str) and d.startswith("src/")}
    assert code == imported_closure(REPO_ROOT / "stages" / f"{stage}.py")


def test_variant_stages_declare_only_their_variant_params() -> None:
    for stage in ("train_cvae", "evaluate"):
        params = DVC_YAML["stages"][stage]["params"]
        assert "cvae.variants" not in params and "cvae" not in params
    assert "cvae.variants.${item.variant}" in DVC_YAML["stages"]["train_cvae"]["params"]
    assert {"cvae.variants", "cvae.seeds", "report"} <= set(DVC_YAML["stages"]["report"]["params"])
