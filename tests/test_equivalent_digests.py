"""examples/equivalent_digests.json: each record says that the training code at commit `after`
(digest `digest`) gave the default run the same outputs as the code at commit `before` (digest
`same_outputs_as`). The two commits' dvc.lock files must record the same outputs and params for
the same group stages (docs/architecture.md#code-digests)."""

from __future__ import annotations

import io
import json
import subprocess
import tarfile
from pathlib import Path

import pytest
import yaml
from conftest import REPO_ROOT
from test_examples_current import load_code_digest

code_digest = load_code_digest()
RECORDS = code_digest.equivalence_records()
GROUP_STAGES = ("train_cvae@", "evaluate@", "confirm_train_cvae@", "confirm_evaluate@")


def git_show(commit: str, path: str) -> bytes:
    return subprocess.run(
        ["git", "-C", str(REPO_ROOT), "show", f"{commit}:{path}"], check=True, capture_output=True
    ).stdout


def digest_at(commit: str, root: Path) -> str:
    """The training code digest of `commit`'s stages/ and src/, unpacked under `root`."""
    archive = subprocess.run(
        ["git", "-C", str(REPO_ROOT), "archive", commit, "src", "stages"],
        check=True,
        capture_output=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(root, filter="data")
    return code_digest.training_digest(root)


def group_records(lock: dict) -> dict[str, tuple[str, str]]:
    """Each group stage of a dvc.lock: its params and its outputs' (path, md5), as JSON."""
    return {
        name: (
            json.dumps(stage.get("params", {}), sort_keys=True),
            json.dumps(sorted((out["path"], out["md5"]) for out in stage["outs"])),
        )
        for name, stage in lock["stages"].items()
        if name.startswith(GROUP_STAGES)
    }


def lock_differences(before: dict, after: dict) -> list[str]:
    """The group stages that one lock has and the other not, or whose params or outputs differ."""
    old, new = group_records(before), group_records(after)
    found = [f"{name}: only in one lock" for name in sorted(old.keys() ^ new.keys())]
    for name in sorted(old.keys() & new.keys()):
        if old[name][0] != new[name][0]:
            found.append(f"{name}: params differ")
        if old[name][1] != new[name][1]:
            found.append(f"{name}: outputs differ")
    return found


@pytest.mark.parametrize("record", RECORDS, ids=[r["digest"] for r in RECORDS])
def test_an_equivalence_record_shows_the_same_outputs(record: dict, tmp_path: Path) -> None:
    assert digest_at(record["after"], tmp_path / "after") == record["digest"]
    assert digest_at(record["before"], tmp_path / "before") == record["same_outputs_as"]
    before, after = (yaml.safe_load(git_show(record[k], "dvc.lock")) for k in ("before", "after"))
    assert group_records(before), "no group stage in the earlier lock"
    assert lock_differences(before, after) == []


def test_a_changed_output_or_a_missing_stage_is_found() -> None:
    out = {"path": "models/cvae/a", "md5": "1.dir"}
    stage = {"params": {"params.yaml": {"cvae.rates": [1.0]}}, "outs": [out]}
    lock = {"stages": {"train_cvae@0-a-0": stage, "evaluate@0-a-0": stage, "report": stage}}
    changed = {**stage, "outs": [{**out, "md5": "2.dir"}]}
    other = {"stages": {"train_cvae@0-a-0": changed, "report": {}}}
    assert lock_differences(lock, lock) == []
    assert lock_differences(lock, other) == [
        "evaluate@0-a-0: only in one lock",
        "train_cvae@0-a-0: outputs differ",
    ]


def test_digests_stay_current_through_a_chain_of_records(tmp_path: Path) -> None:
    today = code_digest.training_digest()
    records = [
        {"digest": today, "same_outputs_as": "b"},
        {"digest": "b", "same_outputs_as": "c"},
        {"digest": "x", "same_outputs_as": "y"},
    ]
    path = tmp_path / "equivalent_digests.json"
    path.write_text(json.dumps(records))
    assert code_digest.current_digests(path=path) == {today, "b", "c"}
