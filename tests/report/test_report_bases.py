"""The procedure over bases (zgain.results.load.bases) against hand computations.

A study of four bases: base 0 screens (report_fakes' numbers, seeds 0, 1, 2, two rates) and
bases 1, 2 and 3 confirm (CONFIRMING below: seeds 0, 1 at the headline rate C = 2.5). Each
replicate's capture is moved to exactly C along the screening base's frontier slope, a run more
than 10% off C is left out, and a comparison's interval is over the per-base mean differences
of the confirming bases: the screening base chose the contested group and is no replicate
(docs/method.md#claims-about-the-procedure).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from report_fakes import (
    HEADLINE,
    ORACLE_TOKEN_SURPRISAL,
    base_excess,
    base_gap,
    base_sha256,
    make_params,
    write_run,
    write_study,
)
from scipy import stats

from stages import report as report_stage
from zgain.core.errors import DataError
from zgain.core.io import write_json
from zgain.core.runs import Run, Tier
from zgain.params import Params
from zgain.results.analysis.procedure import base_n_off, base_values
from zgain.results.load.bases import base_facts, load_bases

BASES = (0, 1, 2, 3)
CONFIRM_SEEDS = (0, 1)
# the confirming runs at C = 2.5: (capture, achieved kl) of seeds 0 and 1, per (base, variant)
CONFIRMING = {
    (1, "token_mean"): ((0.30, 2.5), (0.34, 2.6)),
    (1, "token_sum"): ((0.10, 2.5), (0.20, 2.2)),  # seed 1: −12% off C, left out
    (1, "example_inverse"): ((0.60, 2.5), (0.70, 2.4)),
    (2, "token_mean"): ((0.25, 2.5), (0.27, 2.5)),
    (2, "token_sum"): ((0.05, 2.5), (0.07, 2.5)),
    (2, "example_inverse"): ((0.55, 2.5), (0.99, 3.0)),  # seed 1: +20% off C, left out
    (3, "token_mean"): ((0.28, 2.5), (0.30, 2.5)),
    (3, "token_sum"): ((0.08, 2.5), (0.10, 2.5)),
    (3, "example_inverse"): ((0.62, 2.5), (0.64, 2.5)),
}
# the screening base's runs at C = 2.5 (report_fakes: capture = z_information / 10, KL)
SCREENING_RUNS = {
    "token_mean": ((0.1, 2.3), (0.2, 2.5), (0.3, 2.7)),
    "example_inverse": ((0.5, 2.4), (0.65, 2.5), (0.7, 2.6)),
}
# capture's frontier slope at C = 2.5 on the screening base, one-sided from C = 1.0 (where
# capture and KL are the headline values × 0.5 and × 0.4): Δ seed-mean capture / Δ seed-mean KL
SLOPE = {
    "token_mean": (0.2 - 0.1) / (2.5 - 1.0),
    "example_inverse": (1.85 / 3 - 1.85 / 6) / (2.5 - 1.0),
}
COMPARISONS = [  # each contested variant − the baseline, then the declared pair
    ("token_sum", "token_mean"),
    ("example_inverse", "token_mean"),
    ("token_sum", "example_inverse"),
]


def at_c(capture: float, kl: float, variant: str) -> float:
    """A run's capture moved along its variant's slope to KL = C."""
    return capture + SLOPE[variant] * (HEADLINE - kl)


def write_bases_study(root: Path) -> Params:
    params = make_params(root, bases=BASES, confirm_seeds=CONFIRM_SEEDS)
    write_study(params)
    for (base, variant), runs in CONFIRMING.items():
        for seed, (capture, kl) in zip(CONFIRM_SEEDS, runs, strict=True):
            run = Run(variant, HEADLINE, seed, base, Tier.CONFIRMING)
            eval_dir = Path(params.paths.eval_dir)
            write_run(eval_dir, variant, seed, rate=HEADLINE, run=run, capture=capture, kl=kl)
    return params


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Params, Path]:
    params = write_bases_study(tmp_path_factory.mktemp("bases"))
    report_stage.run(params)
    return params, Path(params.paths.reports_dir)


def procedure(reports: Path) -> pd.DataFrame:
    return pd.read_csv(reports / "tables" / "procedure.csv")


def row(table: pd.DataFrame, a: str, b: str, metric: str = "capture") -> pd.Series:
    rows = table[(table["a"] == a) & (table["b"] == b) & (table["metric"] == metric)]
    assert len(rows) == 1, (a, b, metric)
    return rows.iloc[0]


def per_base_differences() -> list[float]:
    """example_inverse − token_mean capture at C: each base's mean paired difference."""
    base0 = np.mean(
        [
            at_c(*ei, "example_inverse") - at_c(*tm, "token_mean")
            for ei, tm in zip(
                SCREENING_RUNS["example_inverse"], SCREENING_RUNS["token_mean"], strict=True
            )
        ]
    )
    # base 1: both seeds; base 2: seed 0 only (example_inverse seed 1 is off target)
    base1 = np.mean(
        [
            at_c(0.60, 2.5, "example_inverse") - at_c(0.30, 2.5, "token_mean"),
            at_c(0.70, 2.4, "example_inverse") - at_c(0.34, 2.6, "token_mean"),
        ]
    )
    base2 = at_c(0.55, 2.5, "example_inverse") - at_c(0.25, 2.5, "token_mean")
    base3 = np.mean([0.62 - 0.28, 0.64 - 0.30])
    return [float(base0), float(base1), float(base2), float(base3)]


def test_the_procedure_mean_is_the_mean_of_the_per_base_mean_differences(built) -> None:
    _, reports = built
    cell = row(procedure(reports), "example_inverse", "token_mean")
    per_base = per_base_differences()
    # base 0's adjustments cancel in its mean: 0.6167 − 0.2; then (0.3 + 0.3872) / 2; 0.3; 0.34
    assert per_base == pytest.approx([0.416667, 0.343611, 0.3, 0.34], abs=1e-6)
    # the screening base 0 chose the contested group: the claims rest on bases 1, 2 and 3
    replicates = per_base[1:]
    mean = sum(replicates) / 3
    half = stats.t.ppf(0.975, 2) * np.std(replicates, ddof=1) / math.sqrt(3)
    assert cell["mean"] == pytest.approx(mean, rel=1e-9)
    assert (cell["low"], cell["high"]) == pytest.approx((mean - half, mean + half), rel=1e-9)
    assert cell["n"] == 3  # the confirming bases, not their 5 replicates
    assert cell["replicates"] == 2 + 1 + 2
    assert cell["rate"] == HEADLINE


def test_the_verdict_over_bases_is_the_rule_on_the_per_base_means(built) -> None:
    _, reports = built
    table = procedure(reports)
    cell = row(table, "example_inverse", "token_mean")
    per_base = np.array(per_base_differences()[1:])  # the confirming bases 1, 2 and 3
    se = per_base.std(ddof=1) / math.sqrt(3)
    p = 2 * stats.t.sf(abs(per_base.mean() / se), 2)
    assert cell["p"] == pytest.approx(p, rel=1e-9)
    half = stats.t.ppf(0.95, 2) * se  # the (1 − 2α) TOST interval
    low, high = per_base.mean() - half, per_base.mean() + half
    assert (cell["tost_low"], cell["tost_high"]) == pytest.approx((low, high), rel=1e-9)
    family = table[(table["rate"] == cell["rate"]) & (table["metric"] == "capture")]
    m = len(family)  # Holm over the family: the smallest p is multiplied by m
    if cell["p"] == family["p"].min():
        assert cell["p_holm"] == pytest.approx(min(1.0, m * p), rel=1e-9)
    expected = "worse" if cell["p_holm"] < 0.05 and per_base.mean() < 0 else None
    expected = "better" if cell["p_holm"] < 0.05 and per_base.mean() > 0 else expected
    expected = "equivalent" if low > -0.05 and high < 0.05 else expected
    assert cell["verdict"] == (expected or "undetermined")


def test_every_comparison_is_over_all_bases_and_counts_its_left_out_runs(built) -> None:
    _, reports = built
    table = procedure(reports)
    pairs = list(dict.fromkeys(zip(table["a"], table["b"], strict=True)))
    assert pairs == COMPARISONS
    assert set(table["metric"]) == {"capture", "marginal_gain"}
    assert (table["n"] == 3).all()  # the confirming bases; the screening base is none
    # off target on the confirming bases: token_sum seed 1 on base 1 (−12%), example_inverse
    # seed 1 on base 2 (+20%) (token_sum seed 2 on the screening base 0 counts nowhere here)
    excluded = {("token_sum", "token_mean"): 1, ("example_inverse", "token_mean"): 1}
    excluded[("token_sum", "example_inverse")] = 2
    replicates = {("token_sum", "token_mean"): 1 + 2 + 2}
    replicates[("example_inverse", "token_mean")] = 2 + 1 + 2
    replicates[("token_sum", "example_inverse")] = 1 + 1 + 2
    for (a, b), count in excluded.items():
        for metric in ("capture", "marginal_gain"):
            cell = row(table, a, b, metric)
            assert cell["excluded"] == count, (a, b, metric)
            assert cell["replicates"] == replicates[(a, b)], (a, b, metric)


def test_a_run_off_its_target_is_left_out_not_moved(built) -> None:
    params, _ = built
    base2 = load_bases(params)[2]
    values = base_values(base2, "example_inverse", HEADLINE, "capture", SLOPE["example_inverse"])
    assert values["base"].tolist() == [2, 2] and values["seed"].tolist() == [0, 1]
    assert values["value"].iloc[0] == pytest.approx(0.55)
    assert math.isnan(values["value"].iloc[1])  # KL 3.0 for C = 2.5: +20%
    assert base_n_off(base2, ("example_inverse", "token_mean"), HEADLINE) == 1
    base1 = load_bases(params)[1]
    moved = base_values(base1, "token_mean", HEADLINE, "capture", SLOPE["token_mean"])["value"]
    assert moved.tolist() == pytest.approx([0.30, 0.34 - 0.1 / 15])  # KL 2.6: 4% off, moved


def test_bases_table_carries_each_base_json(built) -> None:
    _, reports = built
    table = pd.read_csv(reports / "tables" / "bases.csv", dtype={"sha256": str})
    assert table["base"].tolist() == list(BASES)
    assert table["tier"].tolist() == ["screening", "confirming", "confirming", "confirming"]
    assert table["sha256"].tolist() == [base_sha256(b) for b in BASES]
    assert table["test_excess_nats"].tolist() == pytest.approx([base_excess(b) for b in BASES])
    assert table["seeds"].tolist() == [3, 2, 2, 2]
    assert (table["rate"] == HEADLINE).all()
    # each variant's mean capture at C, off-target runs left out
    assert table.loc[1, "token_mean"] == pytest.approx((0.30 + 0.34 - 0.1 / 15) / 2)
    assert table.loc[2, "example_inverse"] == pytest.approx(0.55)
    assert table.loc[2, "token_sum"] == pytest.approx(0.06)


def summary_section(text: str, title: str) -> str:
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else len(text)]


def test_findings_say_what_holds_over_bases(built) -> None:
    _, reports = built
    text = (reports / "summary.md").read_text()
    findings = summary_section(text, "Findings")
    paragraph = next(line for line in findings.splitlines() if line.startswith("**Over bases**"))
    assert paragraph.startswith(
        "**Over bases** (3: bases 1, 2, 3 × 2 seeds; the screening base 0, which chose the "
        "contested group, is not a replicate), a − b at C = 2.5, 95% t over bases, the rule's "
        "verdict: "
    )
    table = procedure(reports)
    at = table[(table["metric"] == "capture") & (table["b"] == "token_mean")].set_index("a")
    above = at[at["verdict"] == "better"].index.tolist()
    head = f"{', '.join(above)} above token_mean" if above else "none above token_mean"
    assert f"{head} on capture (" in paragraph
    # one row per comparison, the declared pair included, with the hand-computed interval
    rows = {line.split(" | ")[0].strip("| "): line for line in findings.splitlines()}
    for a, b in COMPARISONS:
        assert f"{a} − {b}" in rows, (a, b)
    per_base = per_base_differences()[1:]  # the confirming bases 1, 2 and 3
    mean = sum(per_base) / 3
    half = stats.t.ppf(0.975, 2) * np.std(per_base, ddof=1) / math.sqrt(3)
    ours = at.loc["example_inverse"]
    symbol = {"better": "▲", "worse": "▼", "equivalent": "≈", "undetermined": "?"}
    cell = f"| {mean:+.3f} [{mean - half:+.3f}, {mean + half:+.3f}] {symbol[ours['verdict']]} |"
    assert cell in rows["example_inverse − token_mean"]
    sigma_b = "0" if ours["sigma_b"] == 0 else f"{ours['sigma_b']:.3f}"
    sigmas = (
        f"| {sigma_b} (≤ {ours['sigma_b_upper']:.3f}), "
        f"{ours['sigma_w']:.3f} (≤ {ours['sigma_w_upper']:.3f}) |"
    )
    assert rows["example_inverse − token_mean"].endswith(sigmas)
    # the rule names both Holm families: the screening one and the one over bases
    family = table.groupby(["rate", "metric"]).size()
    assert family.nunique() == 1
    assert f"comparisons (over bases: the {family.iloc[0]} of one rate and metric) rejects" in (
        findings
    )
    # three screening seeds: the screening tier's own verdict table follows
    assert "| a (− token_mean) |" in findings
    assert "Every run starts from one base" not in findings


def test_summary_numbers_the_procedure_tables_among_the_others(built) -> None:
    _, reports = built
    text = (reports / "summary.md").read_text()
    section = summary_section(text, "Over bases: claims about the procedure")
    captions = [line for line in section.splitlines() if line.startswith("*Table")]
    assert len(captions) == 3 and "95% t-interval over bases" in captions[0]
    assert "b_t − b*_t" in captions[2]
    assert base_sha256(1)[:12] in section and base_sha256(1)[:13] not in section
    numbers = [int(line[7:].split(".")[0]) for line in text.splitlines() if line[:7] == "*Table "]
    assert numbers == list(range(1, len(numbers) + 1))


def test_a_missing_confirming_run_names_its_stage(tmp_path: Path) -> None:
    params = write_bases_study(tmp_path)
    run = Run("token_sum", HEADLINE, 1, 2, Tier.CONFIRMING)
    path = run.eval_dir(params.paths.eval_dir) / "metrics.json"
    path.unlink()
    expected = (
        f"evaluation of variant 'token_sum', rate 2.5, seed 1, base 2 is missing: {path} not "
        "found (run `dvc repro confirm_evaluate@2-1`)"
    )
    with pytest.raises(DataError) as raised:
        load_bases(params)
    assert str(raised.value) == expected


def test_a_missing_base_json_is_one_line_naming_the_file(tmp_path: Path) -> None:
    params = write_bases_study(tmp_path)
    path = Path(params.paths.base(2).base_meta)
    path.unlink()
    with pytest.raises(DataError) as raised:
        load_bases(params)
    assert str(raised.value) == f"{path} not found: run `dvc repro train_base@2`"
    assert "\n" not in str(raised.value)


def test_a_base_without_an_oracle_has_no_test_excess(tmp_path: Path) -> None:
    path = tmp_path / "base.json"
    write_json({"sha256": "ab" * 32, "metrics": {"test_nll": 3.0}}, path)
    sha, excess = base_facts(path, 0)
    assert sha == "ab" * 32 and math.isnan(excess)


def test_the_mismatch_table_is_each_bases_gap_to_the_oracle_on_the_test_split(built) -> None:
    """b_t − b*_t by position, per base, from the test rows alone (the fake train row, 9 nats
    off, must not count), and the summary shows b*_t and each base's gap."""
    _, reports = built
    table = pd.read_csv(reports / "tables" / "mismatch.csv")
    assert table["base"].unique().tolist() == list(BASES)
    for base in BASES:
        rows = table[table["base"] == base].set_index("position")
        assert rows.index.tolist() == [0, 1, 2]
        assert rows["n_tokens"].tolist() == [3, 3, 3]
        for t, star in enumerate(ORACLE_TOKEN_SURPRISAL):
            assert rows.loc[t, "oracle_surprisal"] == pytest.approx(star, abs=1e-12)
            # b_t is stored in float32, so the gap holds to its rounding
            assert rows.loc[t, "mismatch"] == pytest.approx(base_gap(base, t), abs=1e-6)
            assert rows.loc[t, "base_surprisal"] == pytest.approx(
                star + base_gap(base, t), abs=1e-6
            )
    section = summary_section(
        (reports / "summary.md").read_text(), "Over bases: claims about the procedure"
    )
    last = f"| base {BASES[-1]}: b_t − b*_t | " + " | ".join(
        f"{base_gap(BASES[-1], t):+.3f}" for t in range(3)
    )
    assert last in section and "| oracle b*_t | 0.500 | 0.100 | 0.050 |" in section
