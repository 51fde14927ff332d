"""dvc.yaml declares, for each stage, exactly the library code that stage imports."""

from __future__ import annotations

import pytest
import yaml
from conftest import REPO_ROOT

from zgain.core.closure import imported_closure, stage_code_digest
from zgain.core.runs import CONFIRM_PREFIX, GROUP_STAGES

DVC_YAML = yaml.safe_load((REPO_ROOT / "dvc.yaml").read_text())
CONFIRM_STAGES = tuple(CONFIRM_PREFIX + stage for stage in GROUP_STAGES)
PER_BASE_STAGES = ("train_base", "surprisal", "normalizer")


def body(stage: str) -> dict:
    """A stage's definition (a foreach stage's `do`)."""
    definition = DVC_YAML["stages"][stage]
    return definition.get("do", definition)


def module(stage: str) -> str:
    """The stages/ module a dvc.yaml stage runs: a confirming group runs its screening twin's."""
    return stage.removeprefix(CONFIRM_PREFIX)


def closure(stage: str) -> set[str]:
    return imported_closure(REPO_ROOT, REPO_ROOT / "stages" / f"{module(stage)}.py")


def code_deps(stage: str) -> set[str]:
    declared = body(stage)["deps"]
    assert f"stages/{module(stage)}.py" in declared
    return {d for d in declared if isinstance(d, str) and d.startswith("src/")}


def covered(declared: set[str], imported: set[str]) -> set[str]:
    """The imported files a stage's declared code covers: a file itself, a folder (the report
    stage's `src/zgain/report`, `src/zgain/stats`) every imported file under it; a folder that
    covers none is kept as declared, so it fails the comparison."""
    files = {d for d in declared if d.endswith(".py")}
    out = set(files)
    for folder in declared - files:
        under = {f for f in imported if f.startswith(folder.rstrip("/") + "/")}
        out |= under or {folder}
    return out


@pytest.mark.parametrize(
    "stage", sorted(set(DVC_YAML["stages"]) - {*GROUP_STAGES, *CONFIRM_STAGES, "code_digest"})
)
def test_stage_deps_are_exactly_its_imports(stage: str) -> None:
    imported = closure(stage)
    assert covered(code_deps(stage), imported) == imported


@pytest.mark.parametrize("stage", GROUP_STAGES + CONFIRM_STAGES)
def test_group_stages_depend_on_their_code_digest_alone(stage: str) -> None:
    """A group stage names no library file; its digest names exactly the files it imports."""
    assert code_deps(stage) == set()
    assert f"${{paths.code_dir}}/{module(stage)}.json" in body(stage)["deps"]
    digest = stage_code_digest(REPO_ROOT, module(stage))
    assert set(digest["files"]) == closure(stage)
    assert all(len(sha) == 64 for sha in digest["files"].values())


@pytest.mark.parametrize("stage", PER_BASE_STAGES + GROUP_STAGES + CONFIRM_STAGES)
def test_no_base_or_group_stage_reads_the_lists_of_bases_or_seeds(stage: str) -> None:
    """Adding a base reruns no existing stage and adding a CVAE seed reruns no base: no stage
    below the report declares the lists those edits change (docs/architecture.md#bases)."""
    params = set(body(stage).get("params", []))
    lists = {"base", "base.seeds", "cvae", "cvae.seeds", "cvae.confirm", "cvae.confirm.bases"}
    assert not params & (lists | {"cvae.confirm.seeds"})
    if stage == "train_base":
        keys = set(yaml.safe_load((REPO_ROOT / "params.yaml").read_text())["base"]) - {"seeds"}
        assert {p.removeprefix("base.") for p in params if p.startswith("base.")} == keys


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
    """The stage names dvc.yaml resolves to under params.yaml: one per base for the per-base
    stages, (first base, variant, seed) for the screening groups, (base, seed) for the
    confirming ones."""
    params = yaml.safe_load((REPO_ROOT / "params.yaml").read_text())
    cvae, bases = params["cvae"], params["base"]["seeds"]
    names = set()
    for name, stage in DVC_YAML["stages"].items():
        if "foreach" in stage:
            assert stage["foreach"] == "${base.seeds}"
            names |= {f"{name}@{b}" for b in bases}
        elif name in GROUP_STAGES:
            assert stage["matrix"] == {
                "base": ["${base.seeds[0]}"],
                "variant": "${cvae.variants}",
                "seed": "${cvae.seeds}",
            }
            names |= {f"{name}@{bases[0]}-{v}-{s}" for v in cvae["variants"] for s in cvae["seeds"]}
        elif name in CONFIRM_STAGES:
            assert stage["matrix"] == {
                "base": "${cvae.confirm.bases}",
                "seed": "${cvae.confirm.seeds}",
            }
            confirm = cvae["confirm"]
            names |= {f"{name}@{b}-{s}" for b in confirm["bases"] for s in confirm["seeds"]}
        else:
            names.add(name)
    return names


def test_the_committed_lock_records_exactly_the_stages_of_the_pipeline() -> None:
    """DVC keeps the lock entry of a stage that left dvc.yaml (a renamed group, a dropped seed)
    until it is removed by hand, and every dvc command reads the whole lock: the committed
    lock holds the default run's stages and no other (docs/architecture.md#code-digests)."""
    lock = yaml.load((REPO_ROOT / "dvc.lock").read_text(), Loader=yaml.CSafeLoader)
    assert set(lock["stages"]) == pipeline_stage_names()
