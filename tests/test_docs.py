"""The docs the code cites exist: every `docs/<page>.md#anchor` names a heading of that page,
and every relative link in the README, docs/, reports/ and studies/ points at a file that
exists."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import REPO_ROOT

DOCS = REPO_ROOT / "docs"
CITATION = re.compile(r"docs/([a-z\-]+)\.md#([a-z0-9-]+)")
LINK = re.compile(r"\]\(([^)#\s]+)(?:#([a-z0-9-]+))?\)")
README_MAX_LINES = 150


def github_anchor(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading: lowercase, punctuation dropped, spaces to -."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """The anchors of a page's headings (lines in code fences are not headings)."""
    found, fenced = set(), False
    for line in page.read_text().splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif line.startswith("#") and not fenced:
            found.add(github_anchor(line.lstrip("#")))
    return found


def test_every_cited_anchor_is_a_heading_of_its_page() -> None:
    sources = [*REPO_ROOT.joinpath("src").rglob("*.py"), *REPO_ROOT.joinpath("stages").glob("*.py")]
    sources += [*REPO_ROOT.joinpath("tests").rglob("*.py"), *DOCS.glob("*.md")]
    sources += [REPO_ROOT / "README.md", REPO_ROOT / "params.yaml", REPO_ROOT / "dvc.yaml"]
    cited = {
        (path.relative_to(REPO_ROOT).as_posix(), page, anchor)
        for path in sources
        for page, anchor in CITATION.findall(path.read_text())
    }
    assert len(cited) > 10
    missing = sorted(
        (path, page, anchor)
        for path, page, anchor in cited
        if not (DOCS / f"{page}.md").is_file() or anchor not in anchors(DOCS / f"{page}.md")
    )
    assert missing == []


def test_every_relative_link_of_the_readme_docs_and_reports_resolves() -> None:
    """Reports included: an example's copied report must link to docs/ from where it sits."""
    broken = []
    pages = [
        REPO_ROOT / "README.md",
        *DOCS.glob("*.md"),
        *REPO_ROOT.joinpath("reports").rglob("*.md"),
        *REPO_ROOT.joinpath("studies").rglob("*.md"),
    ]
    for page in pages:
        for target, anchor in LINK.findall(page.read_text()):
            if "://" in target:
                continue
            path = (page.parent / target).resolve()
            if not path.exists():
                broken.append((page.name, target))
            elif anchor and path.suffix == ".md" and anchor not in anchors(path):
                broken.append((page.name, f"{target}#{anchor}"))
    assert broken == []


def test_every_link_to_an_anchor_of_its_own_page_resolves() -> None:
    """`[text](#anchor)` in the README and docs/ names a heading of the same page."""
    broken = [
        (page.name, anchor)
        for page in [REPO_ROOT / "README.md", *DOCS.glob("*.md")]
        for anchor in re.findall(r"\]\(#([a-z0-9-]+)\)", page.read_text())
        if anchor not in anchors(page)
    ]
    assert broken == []


def test_the_readme_is_a_front_page() -> None:
    assert len((REPO_ROOT / "README.md").read_text().splitlines()) <= README_MAX_LINES


WALL_TIME = re.compile(r"<!-- wall-time: ([^>]+?) -->(\d+ h \d+ min \d+ s|\d+ min \d+ s|\d+ s)?")


def test_every_quoted_wall_time_is_its_record() -> None:
    """README and docs quote durations through `<!-- wall-time: NAME -->`, each equal to the
    record NAME of bench/wall-times.json (written by `python -m bench.wall_time`)."""
    from bench.wall_time import RECORDS, duration, read_records

    records = read_records(RECORDS)
    quoted = set()
    for page in [REPO_ROOT / "README.md", *DOCS.glob("*.md")]:
        for name, text in WALL_TIME.findall(page.read_text()):
            assert name in records, f"{page.name}: no record {name!r} in {RECORDS.name}"
            assert text == duration(records[name]["seconds"]), f"{page.name}: {name}"
            quoted.add(name)
    assert {"make repro", "make test"} <= quoted, "the README quotes both commands' times"


def test_a_wall_time_reads_as_hours_minutes_and_seconds() -> None:
    from bench.wall_time import duration

    assert [duration(s) for s in (45.4, 60, 723.6, 3451, 3725)] == [
        "45 s",
        "1 min 0 s",
        "12 min 4 s",
        "57 min 31 s",
        "1 h 2 min 5 s",
    ]


def test_the_readme_gives_the_findings_own_rerun_command() -> None:
    """The README's results section gives, as code, the command that reruns the study on
    another world: the command the report's Findings generate from the default params
    (zgain.report.sections.scope.rerun_command)."""
    import yaml

    from zgain.params import parse_params
    from zgain.report.sections.scope import rerun_command

    params = parse_params(yaml.safe_load((REPO_ROOT / "params.yaml").read_text()))
    command = rerun_command(params.data)
    results = (REPO_ROOT / "README.md").read_text().split("## Results", 1)[1].split("\n## ", 1)[0]
    found = re.findall(r"```bash\n(.*?)```|`([^`\n]+)`", results)
    code = {(block or inline).strip() for block, inline in found}
    assert command in code, "the README's results section gives the rerun command as code"
    assert command in (REPO_ROOT / "reports" / "summary.md").read_text()


GRID = re.compile(
    r"(\d+) bases, the screening tier's (\d+) variants × (\d+) seeds? × (\d+) target rates? on"
    r" the first base \((\d+) runs, (\d+) steps each\), the confirming tier's (\d+) replicates"
    r" of (\d+) variants at C = ([\d.]+) \((\d+) runs, (\d+) steps each\)"
)


def test_the_readme_describes_the_default_grid_of_params() -> None:
    """The design the README's `make repro` time is for is the one params.yaml sets."""
    import yaml

    from zgain.params import parse_params

    params = parse_params(yaml.safe_load((REPO_ROOT / "params.yaml").read_text()))
    cvae, confirm = params.cvae, params.cvae.confirm
    variants, seeds, rates = len(cvae.variants), len(cvae.seeds), len(cvae.rates)
    found = GRID.search(" ".join((REPO_ROOT / "README.md").read_text().split()))
    assert found, "the README states the default design next to the make repro time"
    replicates = len(confirm.bases) * len(confirm.seeds)
    assert list(found.groups()) == [
        str(n)
        for n in (
            len(params.base.seeds),
            variants,
            seeds,
            rates,
            variants * seeds * rates,
            cvae.common.steps,
            replicates,
            len(confirm.variants),
            *map(repr, confirm.rates),
            replicates * len(confirm.variants) * len(confirm.rates),
            cvae.tier_common(confirming=True).steps,
        )
    ]
