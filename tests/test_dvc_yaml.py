"""dvc.yaml declares, for each stage, exactly the library code that stage imports."""

from __future__ import annotations

import pytest
import yaml
from conftest import REPO_ROOT

from zgain.core.closure import imported_closure, stage_code_digest
from zgain.core.runs import GROUP_STAGES

DVC_YAML = yaml.safe_load((REPO_ROOT / "dvc.yaml").read_text())


def closure(stage: str) -> set[str]:
    return imported_closure(REPO_ROOT, REPO_ROOT / "stages" / f"{stage}.py")


def code_deps(stage: str) -> set[str]:
    declared = DVC_YAML["stages"][stage]["deps"]
    assert f"stages/{stage}.py" in declared
    return {d for d in declared if isinstance(d, str) and d.startswith("src/")}


@pytest.mark.parametrize("stage", sorted(set(DVC_YAML["stages"]) - {*GROUP_STAGES, "code_digest"}))
def test_stage_deps_are_exactly_its_imports(stage: str) -> None:
    assert code_deps(stage) == closure(stage)


@pytest.mark.parametrize("stage", GROUP_STAGES)
def test_group_stages_depend_on_their_code_digest_alone(stage: str) -> None:
    """A group stage names no library file; its digest names exactly the files it imports."""
    assert code_deps(stage) == set()
    assert f"${{paths.code_dir}}/{stage}.json" in DVC_YAML["stages"][stage]["deps"]
    digest = stage_code_digest(REPO_ROOT, stage)
    assert set(digest["files"]) == closure(stage)
    assert all(len(sha) == 64 for sha in digest["files"].values())


def test_the_code_digest_stage_depends_on_every_digested_file_and_its_own() -> None:
    wanted = closure("code_digest").union(*(closure(stage) for stage in GROUP_STAGES))
    assert code_deps("code_digest") == wanted


def test_variant_stages_declare_only_their_variant_params() -> None:
    for stage in ("train_cvae", "evaluate"):
        params = DVC_YAML["stages"][stage]["params"]
        assert "cvae.variants" not in params and "cvae" not in params
    assert "cvae.variants.${item.variant}" in DVC_YAML["stages"]["train_cvae"]["params"]
    assert {"cvae.variants", "cvae.seeds", "report"} <= set(DVC_YAML["stages"]["report"]["params"])


def pipeline_stage_names() -> set[str]:
    """The stage names dvc.yaml resolves to under params.yaml (its matrices: variants × seeds)."""
    params = yaml.safe_load((REPO_ROOT / "params.yaml").read_text())
    names = set()
    for name, stage in DVC_YAML["stages"].items():
        if "matrix" not in stage:
            names.add(name)
            continue
        assert stage["matrix"] == {"variant": "${cvae.variants}", "seed": "${cvae.seeds}"}
        cvae = params["cvae"]
        names |= {f"{name}@{v}-{s}" for v in cvae["variants"] for s in cvae["seeds"]}
    return names


def test_the_committed_lock_records_exactly_the_stages_of_the_pipeline() -> None:
    """DVC keeps the lock entry of a stage that left dvc.yaml (a renamed group, a dropped seed)
    until it is removed by hand, and every dvc command reads the whole lock: the committed
    lock holds the default run's stages and no other (docs/architecture.md#code-digests)."""
    lock = yaml.load((REPO_ROOT / "dvc.lock").read_text(), Loader=yaml.CSafeLoader)
    assert set(lock["stages"]) == pipeline_stage_names()
