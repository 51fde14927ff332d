"""One level for the whole report: every interval, test and caption follows report.confidence
(docs/method.md#verdicts), and the captions name the level and tolerance that computed them."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from report_fakes import HEADLINE, SCREENING, make_params, write_study
from scipy import stats

from stages import report as report_stage
from zgain.params import Params


@pytest.fixture(scope="module")
def at_ninety(tmp_path_factory: pytest.TempPathFactory) -> tuple[Params, Path]:
    params = make_params(
        tmp_path_factory.mktemp("levels"), bases=(SCREENING, 1, 2), confirm_seeds=(0, 1)
    )
    report = params.report.model_copy(update={"confidence": 0.9})
    params = params.model_copy(update={"report": report})
    write_study(params)
    report_stage.run(params)
    return params, Path(params.paths.reports_dir)


def test_the_verdicts_use_report_confidence(at_ninety) -> None:
    _, reports = at_ninety
    verdicts = pd.read_csv(reports / "tables" / "verdicts.csv")
    row = verdicts[verdicts["n"] >= 2].iloc[0]
    # low/high at 90% (t_{0.95}), the TOST interval at 1 − 2α = 80% (t_{0.90})
    n, se = int(row["n"]), float(row["se"])
    assert row["high"] - row["mean_diff"] == pytest.approx(stats.t.ppf(0.95, n - 1) * se)
    assert row["tost_high"] - row["mean_diff"] == pytest.approx(stats.t.ppf(0.90, n - 1) * se)


def test_every_caption_names_the_level_it_was_computed_at(at_ninety) -> None:
    _, reports = at_ninety
    text = (reports / "summary.md").read_text()
    assert "95%" not in text
    assert "with a 90% t-interval over bases" in text
    assert "each with its one-sided 90% upper bound" in text
    assert "≈ if the 80% interval is inside ±δ" in text and "rejects at 10%" in text
    assert "▲ better ▼ worse ≈ equivalent (80% interval) ? undetermined" in text
    assert "Intervals: 90%, jackknife. The 80% TOST interval" in text
    assert f"at C = {HEADLINE:g} (90% interval)" in text
    assert "its 90% jackknife interval over 3 seeds" in text
    assert text.count(">10% off C") == 2  # RATE_TOLERANCE, in the rule and over bases
