"""dvc.yaml declares, for each stage, exactly the library code that stage imports."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import yaml
from conftest import REPO_ROOT

DVC_YAML = yaml.safe_load((REPO_ROOT / "dvc.yaml").read_text())


def zgain_imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    return {
        "src/" + node.module.replace(".", "/") + ".py"
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("zgain.")
    }


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
