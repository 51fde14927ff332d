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
from zgain.report.sections.findings import negative_information, robust_sentence
from zgain.report.sections.scope import rerun_command, world_sentence


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


def test_the_findings_fit_one_screen_with_the_verdict_table(reports: Path) -> None:
    text = findings((reports / "summary.md").read_text())
    assert len(text) <= 3000
    assert all(len(line) <= 600 for line in text.splitlines() if line.startswith("- "))
    # capture (slope from the seed means, fakes' KL within 10%): example_inverse above
    assert (
        "At C = 2.5, example_inverse captures more than token_mean (2 comparisons on capture: "
        "0 worse, 0 equivalent within ±0.05, 1 undetermined); at other rates: example_inverse "
        "(C = 1.0)." in text
    )
    # G^marg (slope 0, so adjusted = raw): example_inverse − token_mean = −0.1, −0.08, −0.1
    row = next(line for line in text.splitlines() if line.startswith("| example_inverse | "))
    assert "| -0.093 [" in row and "] ▼ |" in row and row.endswith("| ▲▼ |")
    # token_sum's seed 2 is 20% off its target: left out, so 2 replicates and no verdict
    row = next(line for line in text.splitlines() if line.startswith("| token_sum | "))
    assert row.count("?") == 4
    assert "n′" not in text  # replicates needed: in the verdict tables below, not here
    assert "Net gain (gross − KL) is negative in" in text
    assert "| token_sum − example_inverse |" in text  # the declared pair keeps both names
    verdicts = pd.read_csv(reports / "tables" / "verdicts.csv")
    row = verdicts[
        (verdicts["metric"] == "marginal_gain")
        & (verdicts["a"] == "example_inverse")
        & (verdicts["b"] == "token_mean")
    ]
    assert row["verdict"].tolist() == ["worse", "worse"]  # at both rates
    assert row["mean_diff"].tolist() == pytest.approx([-0.28 / 3] * 2)
    assert set(verdicts["metric"]) == {"capture", "marginal_gain"}  # I^θ is not tested again
    sums = verdicts[(verdicts["a"] == "token_sum") & (verdicts["b"] == "token_mean")]
    assert (sums["n"] == 2).all() and (sums["verdict"] == "undetermined").all()


def _verdicts(*rows: tuple[str, float, str]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"a": a, "b": "token_mean", "metric": "capture", "rate": rate, "verdict": verdict}
            for a, rate, verdict in rows
        ]
    ).assign(delta=0.05)


def test_none_better_with_an_open_verdict_says_none_is_shown_to() -> None:
    decided = _verdicts(("a", 1.0, "worse"), ("b", 1.0, "equivalent"), ("a", 2.0, "worse"))
    assert robust_sentence(decided, 1.0, "token_mean", "capture") == (
        "At C = 1.0 no variant captures more than token_mean (2 comparisons on capture: 1 worse, "
        "1 equivalent within ±0.05, 0 undetermined); nor does any at another rate."
    )
    open_ = _verdicts(("a", 1.0, "worse"), ("b", 1.0, "undetermined"), ("a", 2.0, "worse"))
    assert robust_sentence(open_, 1.0, "token_mean", "capture") == (
        "At C = 1.0 no variant is shown to capture more than token_mean (2 comparisons on "
        "capture: 1 worse, 0 equivalent within ±0.05, 1 undetermined); nor does any at another "
        "rate."
    )
    # decided at the headline rate, open at another
    elsewhere = _verdicts(("a", 1.0, "worse"), ("a", 2.0, "undetermined"))
    assert robust_sentence(elsewhere, 1.0, "token_mean", "capture").endswith(
        "no variant captures more than token_mean (1 comparison on capture: 1 worse, "
        "0 equivalent within ±0.05, 0 undetermined); nor is any shown to at another rate."
    )


def test_fewer_than_three_seeds_says_every_verdict_is_undetermined(tmp_path: Path) -> None:
    reports = Path(build(tmp_path, seeds=(0, 1)).paths.reports_dir)
    text = findings((reports / "summary.md").read_text())
    assert "With 2 seeds every screening verdict is undetermined" in text
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


def test_a_verdict_cell_shows_the_interval_its_verdict_was_decided_on() -> None:
    from zgain.report.sections.findings import verdict_cell

    row = {"mean_diff": 0.01, "low": -0.04, "high": 0.06, "tost_low": -0.02, "tost_high": 0.04,
           "verdict": "equivalent", "replicates_needed": ""}  # fmt: skip
    assert verdict_cell(row, 0.95) == "+0.010 ≈ 90% [-0.020, +0.040]"  # TOST's 90% interval
    assert verdict_cell(row, 0.9) == "+0.010 ≈ 80% [-0.020, +0.040]"  # its level from c
    row |= {"verdict": "undetermined", "replicates_needed": "12"}
    assert verdict_cell(row, 0.95) == "+0.010 [-0.040, +0.060] ? n′=12"  # the 95% interval
    row |= {"verdict": "worse", "replicates_needed": ""}
    assert verdict_cell(row, 0.95, interval=False) == "+0.010 ▼"


def test_a_report_of_the_baseline_alone_says_there_is_nothing_to_compare(tmp_path: Path) -> None:
    from report_fakes import SEEDS, make_params, write_study

    from stages import report as report_stage

    params = make_params(tmp_path, SEEDS, variants=("token_mean",))
    write_study(params)
    report_stage.run(params)
    text = findings((Path(params.paths.reports_dir) / "summary.md").read_text())
    assert "No variant besides token_mean is listed: there is nothing to compare." in text
    assert "|---|" not in text  # no verdict table


def test_the_scope_sentence_names_the_world_knobs_that_are_set() -> None:
    data = load_params(REPO_ROOT / "params.yaml").data
    plain = world_sentence(data, 2000)
    assert "prefix" not in plain and "decoy" not in plain
    moved = data.model_copy(update={"prefix": 2, "decoy_positions": (0, 1), "decoy_noise": 0.5})
    assert "noise 0.02, a shared prefix of 2, decoy slots 0, 1 at noise 0.5, V = 16" in (
        world_sentence(moved, 2000)
    )


def test_every_rate_is_said_per_variant_not_over_the_union() -> None:
    """A variant negative at some of its rates only is given those rates; "every rate" is kept
    for the variant negative at each rate it was trained at."""
    rows = [
        ("always", 0.5, -0.2),
        ("always", 1.0, -0.1),
        ("sometimes", 0.5, -0.3),
        ("sometimes", 1.0, 0.04),
        ("never", 0.5, 0.2),
        ("never", 1.0, 0.3),
    ]
    frontier = pd.DataFrame(
        [{"variant": v, "rate": r, "metric": "z_information", "mean": m} for v, r, m in rows]
    )
    by_position = pd.DataFrame(columns=["variant", "position", "mean"])
    text = negative_information(frontier, by_position, 1.0, token_oracle=False)
    assert text.startswith(
        "always has negative I^θ (every rate); sometimes has negative I^θ (C = 0.5): "
    )
    assert "never" not in text
