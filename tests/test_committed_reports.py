"""The committed `reports/` as a reader meets it: intervals inside their metrics' ranges, a
Findings section that fits one screen, and plots whose every series is its own line."""

from __future__ import annotations

import json
import math
import re

import pandas as pd
import pytest
import yaml
from conftest import REPO_ROOT

from zgain.results.analysis.bounds import metric_bounds

REPORTS = REPO_ROOT / "reports"
DVC_YAML = yaml.safe_load((REPO_ROOT / "dvc.yaml").read_text())
PARAMS = yaml.safe_load((REPO_ROOT / "params.yaml").read_text())
LATENT_DIM = PARAMS["cvae"]["common"]["model"]["latent_dim"]
INTERVAL_TABLES = sorted(
    p
    for p in (REPORTS / "tables").glob("*.csv")
    # a variant's values, not differences between two (tables/procedure.csv: a − b)
    if {"variant", "metric", "low", "high"} <= set(pd.read_csv(p, nrows=0).columns)
)


@pytest.mark.parametrize("path", INTERVAL_TABLES, ids=[p.name for p in INTERVAL_TABLES])
def test_no_interval_leaves_its_metric_range(path) -> None:
    table = pd.read_csv(path)
    for row in table.itertuples(index=False):
        low, high = metric_bounds(str(row.metric), LATENT_DIM)
        for end in ("low", "high", "adjusted_low", "adjusted_high"):
            value = getattr(row, end, math.nan)
            if isinstance(value, float) and math.isfinite(value):
                assert low <= value <= high, (path.name, row.variant, row.metric, end, value)


def test_the_findings_fit_one_screen_and_hold_a_table() -> None:
    summary = (REPORTS / "summary.md").read_text()
    start = summary.index("## Findings")
    findings = summary[start : summary.index("\n## ", start + 5)]
    assert len(findings.encode()) <= 3000, len(findings.encode())  # UTF-8 bytes: ▲ is 3
    assert "\n|---|" in findings
    bullets = [line for line in summary.splitlines() if line.startswith("- ")]
    assert max(map(len, bullets)) <= 600


def test_every_plot_colours_one_line_per_series() -> None:
    template = json.loads((REPO_ROOT / ".dvc" / "plots" / "series.json").read_text())
    assert template["encoding"]["color"]["field"] == "series"
    for entry in DVC_YAML["plots"]:
        ((name, plot),) = entry.items()
        assert plot["template"] == "series", name
        ((path, column),) = plot["y"].items()
        data = pd.read_csv(REPO_ROOT / path)
        assert {"series", plot["x"], column} <= set(data.columns), name
        assert data["series"].nunique() > 1, name
        # one point per (series, x): a line per series, not a cloud
        assert not data.duplicated(["series", plot["x"]]).any(), name


def test_the_metric_labels_what_it_holds() -> None:
    view = json.loads((REPORTS / "capture.json").read_text())
    metrics = json.loads((REPORTS / "metrics.json").read_text())
    assert all(re.fullmatch(r"[A-Za-z_0-9]+", key) for key in view)  # no `.`: exp show keeps them
    # each contested variant's capture at C over the confirming bases (bases.csv), not the
    # screening base's (those stay in metrics.json)
    bases = pd.read_csv(REPORTS / "tables" / "bases.csv")
    confirming = bases[bases["tier"] == "confirming"]
    contested = PARAMS["cvae"]["confirm"]["variants"]
    for name in contested:
        assert view[name] == pytest.approx(confirming[name].mean(), abs=5e-5)
    # the claims over bases: each contested variant's mean difference in procedure.csv
    procedure = pd.read_csv(REPORTS / "tables" / "procedure.csv")
    baseline = PARAMS["report"]["baseline_variant"]
    at = procedure[(procedure["b"] == baseline) & (procedure["rate"] == metrics["headline_rate"])]
    assert len(at) > 0
    for row in at.itertuples(index=False):
        key = {"capture": "dc", "marginal_gain": "dg"}[row.metric]
        assert view[f"{key}_{row.a}"] == pytest.approx(row.mean, abs=5e-5)
        mark = {"better": "+", "worse": "-", "equivalent": "=", "undetermined": "?"}[row.verdict]
        assert mark == view[f"v_{row.a}"].split("/")[row.metric == "marginal_gain"]


def test_the_extended_example_reuses_every_default_run_byte_for_byte() -> None:
    """reports/examples/bases6 adds one base to the default design it was run after (its own
    params.yaml less the added base): every run the two share has the same examples.parquet
    bytes, and every added run is the new base's."""
    nesting = json.loads((REPORTS / "examples" / "bases6" / "nesting.json").read_text())
    extended = yaml.safe_load((REPORTS / "examples" / "bases6" / "params.yaml").read_text())
    assert nesting["shared_equal"] == nesting["shared_runs"] > 0 and nesting["differing"] == []
    added = {int(re.search(r"/base(\d+)/", run).group(1)) for run in nesting["added_runs"]}
    assert len(added) == 1 and added <= set(extended["cvae"]["confirm"]["bases"])
    # the shared runs are every run of the design extended: its screening grid and every
    # confirming replicate but the added base's
    cvae, confirm = extended["cvae"], extended["cvae"]["confirm"]
    screening = len(cvae["variants"]) * len(cvae["rates"]) * len(cvae["seeds"])
    confirming = (len(confirm["bases"]) - 1) * len(confirm["seeds"]) * len(confirm["variants"])
    assert nesting["shared_runs"] == screening + confirming * len(confirm["rates"])
    assert len(nesting["added_runs"]) == len(confirm["seeds"]) * len(confirm["variants"])


README_CLAIM = re.compile(r"`(\w+)`\s+\(capture\s+(\w+),\s+G\^marg\s+(\w+)\)", flags=re.MULTILINE)


def test_the_readme_results_say_the_committed_verdicts_over_bases() -> None:
    """Each `variant` (capture V, G^marg V) of the README's Results is that comparison's
    verdict against the baseline in the committed reports/tables/procedure.csv, and the
    opening claim (none shown to capture more) holds there."""
    readme = re.sub(r"<!--.*?-->", "", (REPO_ROOT / "README.md").read_text())
    results = readme[readme.index("## Results") : readme.index("## Your own data")]
    claims = README_CLAIM.findall(results)
    assert len(claims) >= 3
    table = pd.read_csv(REPORTS / "tables" / "procedure.csv")
    baseline = PARAMS["report"]["baseline_variant"]
    at = table[(table["b"] == baseline) & (table["rate"] == 1.0)]
    verdict = {(r.a, r.metric): r.verdict for r in at.itertuples(index=False)}
    for variant, capture, marginal in claims:
        assert verdict[(variant, "capture")] == capture, variant
        assert verdict[(variant, "marginal_gain")] == marginal, variant
    said = "no weighting is shown to make z capture more than `token_mean` by δ or more"
    assert said in " ".join(results.split()).lower()
    assert not (at[at["metric"] == "capture"]["verdict"] == "better").any()
    # over the deciding study's bases no capture interval lies wholly at or above +δ
    deciding = pd.read_csv(REPORTS / "examples" / "deciding" / "claims.csv")
    capture = deciding[deciding["metric"] == "capture"]
    assert (capture["low"] < capture["delta"]).all()


STEPS_SENTENCE = re.compile(r"\((\d+) in a confirming run, (\d+) in a screening run")
STABILITY_SENTENCE = re.compile(r"Annealed is not finished: at ([\d, and]+) steps")


def test_the_readme_results_say_the_trained_steps_and_the_stability_views_columns() -> None:
    """The step counts the README's Results name are params.yaml's, and the other step counts
    it says the stability view reads are the view's columns besides the default's."""
    readme = re.sub(r"<!--.*?-->", "", (REPO_ROOT / "README.md").read_text())
    results = " ".join(
        readme[readme.index("## Results") : readme.index("## Your own data")].split()
    )
    cvae = PARAMS["cvae"]
    confirming, screening = map(int, STEPS_SENTENCE.search(results).groups())
    assert (confirming, screening) == (cvae["confirm"]["steps"], cvae["common"]["steps"])
    said = {int(n) for n in re.findall(r"\d+", STABILITY_SENTENCE.search(results)[1])}
    view = pd.read_csv(REPORTS / "examples" / "stability" / "verdicts.csv")
    columns = {int(run.split()[0]) for run in view["run"].unique()}
    assert confirming in columns and said == columns - {confirming}


PLATEAU_CLAIM = re.compile(
    r"The confirming runs' point change (passes|does not pass) the rule, its interval "
    r"(lies|does not lie) inside the tolerance .*? the screening runs' (does not pass|passes)"
)


def test_the_readme_results_say_which_tier_reached_the_plateau() -> None:
    """Whether the README's Results say each tier's point change passes the plateau rule is the
    committed plateau tables' top group row (the rule's window, the last quarter under the
    default schedule), and whether the confirming tier's interval lies inside the tolerance is
    that row's interval against ±PLATEAU_TOLERANCE."""
    from zgain.results.analysis.plateau import PLATEAU_TOLERANCE

    readme = re.sub(r"<!--.*?-->", "", (REPO_ROOT / "README.md").read_text())
    results = " ".join(
        readme[readme.index("## Results") : readme.index("## Your own data")].split()
    )
    confirming, interval, screening = PLATEAU_CLAIM.search(results).groups()
    for file, said in (("plateau_confirming.csv", confirming), ("plateau.csv", screening)):
        table = pd.read_csv(REPORTS / "tables" / file)
        top = table[table["variant"] == "top group"].iloc[0]
        assert int(top["step_to"]) == int(top["steps"]), file  # the last quarter
        assert bool(top["plateau"]) == (not said.startswith("does not")), file
    table = pd.read_csv(REPORTS / "tables" / "plateau_confirming.csv")
    top = table[table["variant"] == "top group"].iloc[0]
    inside = top["capture_low"] >= -PLATEAU_TOLERANCE and top["capture_high"] <= PLATEAU_TOLERANCE
    assert inside == (interval == "lies")


STABILITY_CLAIM = (
    "on its bases both G^marg verdicts held and the other comparisons stayed undetermined"
)


def test_the_readme_says_which_verdicts_hold_at_both_step_counts() -> None:
    """The README's reading of the stability view is its verdicts.csv: the comparisons that hold
    are exactly the two on G^marg, every other one is undetermined at every step count, and none
    flips or changes with the steps."""
    readme = (REPO_ROOT / "README.md").read_text()
    results = " ".join(
        readme[readme.index("## Results") : readme.index("## Your own data")].split()
    )
    assert STABILITY_CLAIM in results
    view = pd.read_csv(REPORTS / "examples" / "stability" / "verdicts.csv")
    comparisons = view.drop_duplicates(["a", "b", "rate", "metric"])
    held = comparisons[comparisons["agreement"] == "holds"]
    assert len(held) == 2 and set(held["metric"]) == {"marginal_gain"}
    rest = view.merge(held[["a", "b", "rate", "metric"]], how="left", indicator=True)
    rest = rest[rest["_merge"] == "left_only"]
    assert (rest["verdict"] == "undetermined").all() and (rest["agreement"] == "open").all()
