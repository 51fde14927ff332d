"""`zgain sweep-report` as a comparison: experiments against a baseline, paired by seed."""

from __future__ import annotations

import pandas as pd
import pytest
from scipy import stats

from zgain.sweep.compare import DEFAULT, compare, comparison_markdown
from zgain.sweep.tables import SweepError

BASE = {"Experiment": None, "rev": "main", "typ": "baseline", "cvae.variants.a.beta": "None"}
WORKSPACE = {**BASE, "rev": "workspace"}
EXP = {
    "Experiment": "exp1",
    "rev": "abc1234",
    "typ": "branch_base",
    "State": None,
    "cvae.variants.a.beta": 0.05,
    "cvae.variants.c.weights.tok": 1.0,  # a key only the experiment has
}


def runs(values: dict[str, list[float]], rate: float = 1.0) -> pd.DataFrame:
    rows = [
        {"variant": v, "rate": rate, "seed": s, "capture": x, "kl": 1.0}
        for v, xs in values.items()
        for s, x in enumerate(xs)
    ]
    return pd.DataFrame(rows)


RUNS = {
    "main": runs({"a": [0.5, 0.6, 0.7], "b": [0.4, 0.4, 0.4]}),
    "abc1234": runs({"a": [0.6, 0.8, 0.8], "b": [0.4, 0.4, 0.4], "c": [0.1, 0.2, 0.3]}),
}
METRICS = {
    "main": {"headline_rate": 1.0, "variants": {"a": {}, "b": {}}},
    "abc1234": {"headline_rate": 1.0, "variants": {"a": {}, "b": {}, "c": {}}},
}


def build(**kwargs):
    return compare([WORKSPACE, BASE, EXP], RUNS.__getitem__, METRICS.__getitem__, **kwargs)


def test_deltas_are_paired_by_seed_with_a_t_interval() -> None:
    comparison = build()
    assert comparison.baseline == "main"
    row = comparison.deltas.set_index(["variant", "metric"]).loc[("a", "capture")]
    deltas = [0.1, 0.2, 0.1]
    half = stats.t.ppf(0.975, 2) * pd.Series(deltas).std() / 3**0.5
    assert row["delta"] == pytest.approx(sum(deltas) / 3)
    assert row["low"] == pytest.approx(row["delta"] - half)
    assert row["high"] == pytest.approx(row["delta"] + half)
    assert row["n"] == 3
    assert "c" not in set(comparison.deltas["variant"])  # only the experiment has it


def test_params_and_variants_that_differ_are_named() -> None:
    comparison = build()
    params = comparison.params.set_index("param")
    assert params.loc["cvae.variants.a.beta", "baseline"] == DEFAULT
    assert params.loc["cvae.variants.a.beta", "value"] == 0.05
    assert params.loc["cvae.variants.c.weights.tok", "baseline"] == DEFAULT
    assert comparison.variants.to_dict("records") == [
        {"experiment": "exp1", "added": "c", "removed": "none"}
    ]
    text = comparison_markdown(comparison)
    assert "Variants equal to the baseline in every metric: exp1: b" in text
    assert "| exp1 | b |" not in text  # an untouched variant is not repeated


def test_a_named_baseline_and_a_missing_one() -> None:
    assert build(baseline="main").baseline == "main"
    with pytest.raises(SweepError, match="no baseline nope"):
        build(baseline="nope")
    with pytest.raises(SweepError, match="no finished experiment"):
        compare([BASE], RUNS.__getitem__, METRICS.__getitem__)


def test_tested_deltas_get_the_reports_verdict() -> None:
    deltas = build(margins={"capture": 0.05}).deltas.set_index(["variant", "metric"])
    # a: deltas 0.1, 0.2, 0.1: p = 0.0377 alone, the only capture comparison (b is 0, 0, 0)
    a, b = deltas.loc[("a", "capture")], deltas.loc[("b", "capture")]
    assert a["p"] == pytest.approx(stats.ttest_1samp([0.1, 0.2, 0.1], 0.0).pvalue)
    assert b["verdict"] == "equivalent"  # identical runs: the 90% interval is [0, 0]
    assert a["p_holm"] == pytest.approx(min(1.0, 2 * a["p"]))  # family: 2 variants × capture
    assert a["p_holm"] > 0.05 and a["verdict"] == "undetermined"  # 2 × 0.057, 90% [0.04, 0.23]
    assert deltas.loc[("a", "kl"), "verdict"] == ""  # not a tested metric


def test_the_caption_names_the_level_it_was_computed_at() -> None:
    assert "with its 95% t-interval over the seeds" in comparison_markdown(build())
    narrower = build(confidence=0.9)
    assert "with its 90% t-interval over the seeds" in comparison_markdown(narrower)
    row = narrower.deltas.set_index(["variant", "metric"]).loc[("a", "capture")]
    half = stats.t.ppf(0.95, 2) * pd.Series([0.1, 0.2, 0.1]).std() / 3**0.5
    assert row["high"] == pytest.approx(row["delta"] + half)
