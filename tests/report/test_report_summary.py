"""summary.md: captions, generated commentary, damaged flag and glossary.

See docs/method.md#uncertainty-over-seeds; the fake numbers are described in report_fakes.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest
from report_fakes import WEIGHTS, build

ROW_LABELS = {"base", "oracle", "floor", "ceiling", "cap", "even spread", "_mean"}
BACKTICKED = re.compile(r"`([^`]+)`")


VIEWS = ("summary.md", "details.md", "diagnostics.md")


def markdown(reports: Path) -> str:
    """The summary and its views, one after the other (each numbers its own tables)."""
    return "\n".join((reports / name).read_text() for name in VIEWS)


@pytest.fixture(scope="module")
def summary(tmp_path_factory: pytest.TempPathFactory) -> str:
    params = build(tmp_path_factory.mktemp("summary"))
    return markdown(Path(params.paths.reports_dir))


@pytest.fixture(scope="module")
def one_seed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    params = build(tmp_path_factory.mktemp("one_seed"), seeds=(0,))
    return Path(params.paths.reports_dir)


def section(text: str, title: str) -> str:
    """The body of the `## title` section."""
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else len(text)]


def captions(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith(("*Table", "*Figure"))]


def test_header_states_world_runs_and_method(summary: str) -> None:
    head = section(summary, "Setup")
    assert "World: K = 4 strategies" in head
    assert f"Runs: {len(WEIGHTS)} variants × 2 rates × 3 seeds = 18 runs" in head
    assert "headline rate C = 2.5, the one nearest the oracle's mean I* = 10.000" in head
    assert "mean over 3 seeds, 95% t-interval" in head
    assert "intersected with the metric's range" in head  # said once: the base in the Findings
    findings = section(summary, "Findings")
    assert "verdicts are over CVAE seeds given that base" in findings


def test_one_base_makes_no_claim_over_bases(summary: str) -> None:
    # report_fakes' default study has one base: nothing to say about the spread over bases
    assert "## Over bases" not in summary and "**Over bases**" not in summary
    assert "Every run starts from one base (`base.seeds` = [0])" in section(summary, "Findings")


def test_first_table_is_the_decomposition(summary: str) -> None:
    first = next(line for line in summary.splitlines() if line.startswith("| row"))
    assert re.findall(r"`(\w+)`(?: \([^)]*\))?( at C)?", first) == [
        ("gross_gain", ""),
        ("marginal_gain", ""),
        ("marginal_gain", " at C"),
        ("z_information", ""),
        ("z_information", " at C"),
        ("capture", ""),
        ("capture", " at C"),
        ("kl", ""),
        ("net_gain", ""),
    ]
    assert "(G^marg)" in first and "(I^θ)" in first


def test_every_caption_labels_the_method(summary: str) -> None:
    found = captions(summary)
    # rates reached, one decomposition per rate, half-widths, five headline tables, by
    # strategy, the verdicts on capture and on G^marg
    assert sum(c.startswith("*Table") for c in found) == 12
    numbers = [int(re.match(r"\*Table (\d+)\.", c).group(1)) for c in found if c[1] == "T"]
    starts = [i for i, n in enumerate(numbers) if n == 1]  # each document numbers its own
    assert len(starts) == len(VIEWS)
    for first, end in zip(starts, [*starts[1:], len(numbers)], strict=True):
        assert numbers[first:end] == list(range(1, end - first + 1))
    assert sum(c.startswith("*Figure") for c in found) == 6
    for line in found:
        assert "mean over 3 seeds, 95% t-interval" in line or "3 seeds per variant" in line, line


def test_one_seed_has_no_interval_and_says_so(one_seed: Path) -> None:
    text = markdown(one_seed)
    found = captions(text)
    assert len(found) == 18  # 12 tables, 6 figures
    for line in found:
        assert "no interval" in line, line
    assert "One seed" in section(text, "Setup")
    table = pd.read_csv(one_seed / "tables" / "decomposition.csv")
    seeds = table[table["kind"] == "seeds"]
    assert seeds["low"].isna().all() and seeds["high"].isna().all() and (seeds["n"] == 1).all()
    decomposition = section(text, "Gain decomposition at each target rate")
    assert "[" not in decomposition.split("|---|")[1]
    assert "Best " not in text  # no leader rule
    verdicts = pd.read_csv(one_seed / "tables" / "verdicts.csv")
    assert (verdicts["verdict"] == "undetermined").all()


def test_one_rule_no_leader_no_raw_interval_bullets(summary: str) -> None:
    assert "Best " not in summary and "## Commentary" not in summary
    assert "## Paired comparisons" not in summary
    assert all(len(line) <= 600 for line in summary.splitlines() if line.startswith("- "))


def test_the_verdicts_section_has_every_declared_comparison_at_every_rate(summary: str) -> None:
    verdicts = section(summary, "Verdicts at every rate")
    rows = [line for line in verdicts.splitlines() if line.startswith("| example_inverse − ")]
    assert len(rows) == 2  # capture, then G^marg
    assert rows[0].count("▲") == 2 and rows[1].count("▼") == 2
    assert sum(line.startswith("| token_sum − example_inverse") for line in verdicts.splitlines())


@pytest.mark.parametrize(("marginal", "damaged"), [(-0.1, True), (-0.01, False)])
def test_damaged_likelihood_objective(tmp_path: Path, marginal: float, damaged: bool) -> None:
    params = build(tmp_path, sum_marginal=marginal)
    text = (Path(params.paths.reports_dir) / "summary.md").read_text()
    commentary = section(text, "Gain decomposition at each target rate")
    assert ("**damaged**: token_sum" in commentary) is damaged
    assert ("fine-tuning cost likelihood" in commentary) is damaged
    assert ("token_sum is a likelihood objective and keeps" in commentary) is not damaged
    for variant in ("token_mean", "example_inverse"):  # not likelihood objectives
        assert f"damaged**: {variant}" not in commentary


def test_every_metric_name_is_in_the_glossary(summary: str) -> None:
    glossary = section(summary, "Glossary")
    defined = re.findall(r"^- `(\w+)`: ", glossary, flags=re.MULTILINE)
    assert len(defined) == len(set(defined))  # one line each
    body = summary[: summary.index("## Glossary")]
    headers = [line for line in body.splitlines() if line.startswith(("| row", "| variant"))]
    named = {name for line in headers for name in BACKTICKED.findall(line)}
    named |= {name for line in captions(body) for name in BACKTICKED.findall(line)} - ROW_LABELS
    assert named and named <= set(defined), sorted(named - set(defined))
    assert summary.count("## Glossary") == 1


def test_no_undefined_number_is_printed(summary: str) -> None:
    cells = [line for line in summary.splitlines() if line.startswith("| ")]
    assert cells and not any("nan" in line.lower() for line in cells)
    title = (
        "Localization of the z-information on the revealing positions at the headline rate C = 2.5"
    )
    assert "n/a" in section(summary, title)
