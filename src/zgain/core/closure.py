"""The library files a stage imports, and their digest (docs/architecture.md#code-digests).

The group stages (`train_cvae@…`, `evaluate@…`) depend on one digest file of their code instead
of on each file: dvc.lock records every dependency of every stage, and DVC reads and rewrites that
whole file around each stage it runs, so with tens of groups the per-file entries cost seconds a
stage. The digest names each file with its sha256, so it changes exactly when one of them does.
"""

from __future__ import annotations

import ast
from pathlib import Path

from zgain.core.errors import DataError
from zgain.core.io import sha256_file


def module_file(root: Path, module: str) -> str:
    """The file of a zgain module, relative to `root`: `zgain.params` is a package's
    `__init__.py`, `zgain.core.io` a module."""
    path = "src/" + module.replace(".", "/")
    return f"{path}/__init__.py" if (root / path).is_dir() else f"{path}.py"


def error_path_nodes(tree: ast.AST) -> set[int]:
    """Nodes inside an `except` handler: code that runs only when a stage fails (an error
    message), which cannot change a stage's output and so is no dependency of it."""
    return {
        id(node)
        for handler in ast.walk(tree)
        if isinstance(handler, ast.ExceptHandler)
        for node in ast.walk(handler)
    }


def zgain_imports(root: Path, path: Path) -> set[str]:
    """The zgain files `path` imports outside its error paths, with the non-empty
    `__init__.py` of each package on the way (it runs before any of the package's modules)."""
    tree = ast.parse(path.read_text())
    skipped = error_path_nodes(tree)
    found = set()
    for node in ast.walk(tree):
        module = node.module if isinstance(node, ast.ImportFrom) else None
        if module and module.startswith("zgain.") and id(node) not in skipped:
            found.add(module_file(root, module))
            # `from zgain.world import portable` imports the module zgain.world.portable
            for alias in node.names:
                submodule = Path("src", *module.split("."), f"{alias.name}.py")
                if (root / submodule).is_file():
                    found.add(str(submodule))
    for file in list(found):
        parts = Path(file).parts
        for depth in range(3, len(parts)):
            init = Path(*parts[:depth], "__init__.py")
            if (root / init).is_file() and (root / init).stat().st_size:
                found.add(str(init))
    return found


def imported_closure(root: Path, stage_file: Path) -> set[str]:
    """Every zgain file (relative to `root`) that `stage_file` imports, directly or not."""
    seen: set[str] = set()
    todo = [stage_file]
    while todo:
        path = todo.pop()
        if not path.is_file():
            raise DataError(f"{path}: imported by a stage but not found")
        for module in zgain_imports(root, path):
            if module not in seen:
                seen.add(module)
                todo.append(root / module)
    return seen


def stage_code_digest(root: Path, stage: str) -> dict[str, object]:
    """The digest of stage `stage`'s library code: each file of its import closure with its
    sha256, sorted by path."""
    files = sorted(imported_closure(root, root / "stages" / f"{stage}.py"))
    return {"stage": stage, "files": {file: sha256_file(root / file) for file in files}}
