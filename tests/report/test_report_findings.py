"""The summary opens with its generated Findings (docs/method.md#verdicts); the fake numbers
are described in report_fakes."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import REPO_ROOT
from report_fakes import build

from zgain.params import load_params, parse_params
from zgain.report.findings import rerun_command


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return Path(build(tmp_path_factory.mktemp("findings")).paths.reports_dir)


def findings(text: str) -> str:
    start = text.index("## Findings\n")
    return text[start : text.index("\n## ", start)]


def test_the_first_section_is_findings(reports: Path) -> None:
    text = (reports / "summary.md").read_text()
    assert re.findall(r"^## .*$", text, flags=re.MULTILINE)[:2] == ["## Findings", "## Setup"]
    assert "These findings hold on one synthetic world: K = 4 strategies" in findings(text)


def test_verdicts_are_stated_per_rate(reports: Path) -> None:
    text = findings((reports / "summary.md").read_text())
    # G^marg (slope 0, so adjusted = raw): example_inverse − token_mean = −0.1, −0.08, −0.1
    assert "example_inverse keeps a lower G^marg than token_mean (-0.093 [" in text
    assert "Equivalent within ±0.05 on capture: example_inverse and token_mean." in text
    assert "fact about this world until it is shown on others" in text
    assert "](figures/frontier.png)" in text.splitlines()[-1]  # the figure closes the section
    bullets = [line for line in text.splitlines() if line.startswith("- ")]
    # the headline first, then the verdicts at the headline rate, then at the others
    assert bullets[0].startswith("- Headline (C = ")
    headline = bullets[0].removeprefix("- Headline (C = ").split(",")[0]
    assert bullets[1].startswith(f"- At C = {headline}:")
    verdicts = pd.read_csv(reports / "tables" / "verdicts.csv")
    row = verdicts[
        (verdicts["metric"] == "marginal_gain")
        & (verdicts["a"] == "example_inverse")
        & (verdicts["b"] == "token_mean")
    ]
    assert row["verdict"].tolist() == ["worse", "worse"]  # at both rates
    assert row["mean_diff"].tolist() == pytest.approx([-0.28 / 3] * 2)


def test_fewer_than_three_seeds_says_every_verdict_is_undetermined(tmp_path: Path) -> None:
    reports = Path(build(tmp_path, seeds=(0, 1)).paths.reports_dir)
    text = findings((reports / "summary.md").read_text())
    assert "With 2 seeds every verdict is undetermined" in text
    assert (pd.read_csv(reports / "tables" / "verdicts.csv")["verdict"] == "undetermined").all()


def test_the_rerun_command_sets_valid_params() -> None:
    params = load_params(REPO_ROOT / "params.yaml")
    raw = yaml.safe_load((REPO_ROOT / "params.yaml").read_text())
    words = shlex.split(rerun_command(params.data))
    assert words[:3] == ["dvc", "exp", "run"]
    for setting in words[4::2]:
        key, value = setting.split("=", 1)
        raw["data"][key.removeprefix("data.")] = yaml.safe_load(value)
    other = parse_params(raw).data
    assert other.prior != params.data.prior and other.noise != params.data.noise
    assert other.transforms == params.data.transforms[:-1]
