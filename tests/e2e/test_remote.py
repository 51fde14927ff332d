"""docs/scale.md ("Beyond one machine"), run verbatim: four clones of the tiny project share one
local-directory DVC remote. Clone A runs the upstream stages, clones B and C each run one shard
of the runs, clone D restores every run from the run-cache and runs only `report`, whose
numbers equal those of a single-machine run of the same params."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import REPO_ROOT, tiny_params_raw
from dvc_project import make_project, ran_stages, sh

from zgain.params import parse_params

pytestmark = pytest.mark.e2e
FENCE = re.compile(r"^```bash\n(.*?)^```", re.MULTILINE | re.DOTALL)
# blocks the other tests run: the SLURM script and the queue command
NOT_RUN_HERE = ("#!/bin/bash", "ZGAIN_WORKERS=4 dvc queue start")
EXP = "confidence90"
# the tiny profile on one base, one rate and one seed: 2 runs, one group each
VARIANTS, RATES, SEEDS = ("token_mean", "token_share_cc"), (0.5,), (0,)
RUNS = {
    f"{stage}@0-{v}-{s}" for stage in ("train_cvae", "evaluate") for v in VARIANTS for s in SEEDS
}


def one_base(raw: dict) -> dict:
    """The tiny params on the screening base alone (no confirming tier), one rate, one seed."""
    raw["base"]["seeds"] = [0]
    raw["cvae"]["confirm"].update(bases=[], rates=list(RATES))
    raw["cvae"]["seeds"] = list(SEEDS)
    raw["cvae"]["rates"] = list(RATES)
    return raw


def readme_blocks() -> dict[str, str]:
    """The page's bash blocks, keyed by their first line (a comment saying where to run)."""
    text = (REPO_ROOT / "docs" / "scale.md").read_text()
    return {block.splitlines()[0]: block for block in FENCE.findall(text)}


BLOCKS = readme_blocks()


def block(prefix: str) -> str:
    found = [body for head, body in BLOCKS.items() if head.startswith(prefix)]
    assert len(found) == 1, (prefix, list(BLOCKS))
    return found[0]


def run_block(clone: Path, prefix: str, **env: str) -> str:
    """One README block, as written, in `clone` (set -e: a failing line fails the test)."""
    assignments = [f"{key}={value}" for key, value in env.items()]
    return sh(clone, "env", *assignments, "bash", "-euo", "pipefail", "-c", block(prefix))


def cached_stages(output: str) -> set[str]:
    return set(re.findall(r"Stage '([^']+)' is cached - skipping run", output))


def run_stages(stages: set[str]) -> set[str]:
    return {s for s in stages if s.startswith(("train_cvae@", "evaluate@"))}


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The README's three steps across clones A (upstream), B and C (shards), D (assembly)."""
    root = tmp_path_factory.mktemp("remote")
    project = root / "project"
    project.mkdir()
    params = one_base(tiny_params_raw())
    assert tuple(params["cvae"]["variants"]) == VARIANTS
    make_project(project, params)
    sh(root, "git", "clone", "-q", "--bare", "project", "origin.git")
    clones = {name: root / name for name in "abcd"}
    for clone in clones.values():
        sh(root, "git", "clone", "-q", "origin.git", clone.name)

    out = {"root": root, **clones}
    out["remote"] = run_block(clones["a"], "# once, in one clone")
    out["upstream"] = run_block(clones["a"], "# 1.")
    for index, name in enumerate("bc"):
        out[name + "_shard"] = run_block(clones[name], "# 2.", I=str(index), N="2")
    out["assembly"] = run_block(clones["d"], "# 3.")
    return out


def test_every_block_of_the_section_is_run_here_or_by_another_test() -> None:
    run_here = ("# once, in one clone", "# 1.", "# 2.", "# 3.", "# in the clone that", "# in any")
    for heading, body in BLOCKS.items():
        assert heading.startswith(run_here) or body.startswith(NOT_RUN_HERE), heading


def test_the_remote_is_a_directory_beside_the_clones(study: dict) -> None:
    config = (study["d"] / ".dvc" / "config").read_text()  # D got it through git
    assert "remote = storage" in config
    assert (study["root"] / "zgain-remote" / "files" / "md5").is_dir()


def test_upstream_ran_once_and_the_shards_split_the_runs(study: dict) -> None:
    upstream = {"check_params", "generate", "train_base@0", "surprisal@0", "normalizer@0"}
    upstream |= {"code_digest"}
    assert ran_stages(study["upstream"]) == upstream
    b, c = (ran_stages(study[f"{name}_shard"]) for name in "bc")
    # neither shard recomputed an upstream stage: it pulled their outputs
    assert run_stages(b) == b and run_stages(c) == c
    assert b | c == RUNS and not b & c
    assert len(b) == len(c) == len(RUNS) // 2
    # a run's training and evaluation went to the same shard
    for shard in (b, c):
        assert {s.partition("@")[2] for s in shard if s.startswith("train_cvae@")} == {
            s.partition("@")[2] for s in shard if s.startswith("evaluate@")
        }


def test_assembly_restores_every_run_and_runs_only_the_report(study: dict) -> None:
    output = study["assembly"]
    print(output)  # the assembly step, for the record
    assert ran_stages(output) == {"report"}
    assert cached_stages(output) == RUNS
    assert json.loads(sh(study["d"], "dvc", "status", "--json")) == {}
    # the checkpoints and curves came back too, not only the evaluations
    assert len(list((study["d"] / "models" / "cvae").rglob("rate*.pt"))) == len(RUNS) // 2


def test_each_run_records_the_host_and_worker_that_produced_it(study: dict) -> None:
    for variant in VARIANTS:
        for seed in SEEDS:
            where = study["d"] / "data" / "eval" / "base0" / variant / f"seed{seed}"
            run = where / f"rate{RATES[0]!r}"
            path = run / "metrics.json"
            environment = json.loads(path.read_text())["environment"]
            assert environment["host"] == socket.gethostname()
            assert environment["worker"] is None  # one stage at a time: no worker pool
            assert environment["device"] == "cpu"


def test_the_assembled_report_equals_a_single_machine_run(
    study: dict, tiny_pipeline, tmp_path
) -> None:
    """The reference: the same params, every stage run in this process on the same threads as
    the study's stages (float results depend on the thread count)."""
    from stages import evaluate, train_cvae
    from stages import report as report_stage
    from zgain.core.runs import Group

    root = Path(os.path.commonpath(list(tiny_pipeline.paths.model_dump().values())))
    shutil.copytree(root, tmp_path / "single")
    raw = one_base(tiny_params_raw(tmp_path / "single"))
    params = parse_params(raw)
    for variant in VARIANTS:
        for seed in SEEDS:
            train_cvae.run(params, Group.screening(0, variant, seed))
            evaluate.run(params, Group.screening(0, variant, seed))
    paths = params.paths.model_copy(update={"reports_dir": str(tmp_path / "reports")})
    report_stage.run(params.model_copy(update={"paths": paths}))
    single = tmp_path / "reports"
    assembled = study["d"] / "reports"
    assert json.loads((assembled / "metrics.json").read_text()) == json.loads(
        (single / "metrics.json").read_text()
    )
    tables = sorted(p.name for p in (single / "tables").glob("*.csv"))
    assert tables == sorted(p.name for p in (assembled / "tables").glob("*.csv"))
    for name in tables:
        pd.testing.assert_frame_equal(
            pd.read_csv(assembled / "tables" / name), pd.read_csv(single / "tables" / name)
        )


def test_an_experiment_travels_through_the_remote(study: dict) -> None:
    # a clone of its own, assembled like D, so that D's report stays as the other tests read it
    e, b = study["root"] / "e", study["b"]
    sh(study["root"], "git", "clone", "-q", "origin.git", e.name)
    run_block(e, "# 3.")
    done = sh(e, "dvc", "exp", "run", "-n", EXP, "-S", "report.confidence=0.9")
    assert ran_stages(done) == {"check_params", "report"}
    run_block(e, "# in the clone that ran", EXP=EXP)
    run_block(b, "# in any", EXP=EXP)
    sh(b, "dvc", "exp", "apply", EXP)
    # B trained half the runs; the experiment brings every output, checkpoints included
    assert len(list((b / "models" / "cvae").rglob("rate*.pt"))) == len(RUNS) // 2
    assert yaml.safe_load((b / "params.yaml").read_text())["report"]["confidence"] == 0.9
    assert json.loads(sh(b, "dvc", "status", "--json")) == {}
