"""The docs the code cites exist: every `docs/method.md#anchor` names a heading of that file."""

from __future__ import annotations

import re

from conftest import REPO_ROOT

METHOD = REPO_ROOT / "docs" / "method.md"
CITATION = re.compile(r"docs/method\.md#([a-z0-9-]+)")


def github_anchor(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading: lowercase, punctuation dropped, spaces to -."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def test_every_cited_anchor_is_a_heading_of_the_method() -> None:
    anchors = {
        github_anchor(line.lstrip("#"))
        for line in METHOD.read_text().splitlines()
        if line.startswith("#")
    }
    sources = [*REPO_ROOT.joinpath("src").rglob("*.py"), *REPO_ROOT.joinpath("stages").glob("*.py")]
    sources += [REPO_ROOT / "README.md", REPO_ROOT / "params.yaml", METHOD]
    cited = {
        (path.relative_to(REPO_ROOT).as_posix(), anchor)
        for path in sources
        for anchor in CITATION.findall(path.read_text())
    }
    assert len(cited) > 10
    missing = sorted((path, anchor) for path, anchor in cited if anchor not in anchors)
    assert missing == []
