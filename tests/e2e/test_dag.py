"""The whole DAG under real `dvc`, in a temporary git repository, on the tiny params profile."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import tiny_params_raw
from dvc_project import commit, head, make_project, ran_stages, reset, run, set_param, sh

pytestmark = pytest.mark.e2e


@dataclass(frozen=True)
class Built:
    """The tiny project after its first `dvc repro`, committed."""

    path: Path
    first_run: set[str]
    baseline: str


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    repo = make_project(tmp_path_factory.mktemp("dag"), tiny_params_raw())
    first = ran_stages(sh(repo, "dvc", "repro"))
    commit(repo, "baseline run")
    return Built(repo, first, head(repo))


@pytest.fixture
def repo(built: Built) -> Iterator[Path]:
    """The reproduced project; each test's edits, commits and runs are undone after it, so the
    tests hold in any order."""
    yield built.path
    reset(built.path, built.baseline)


def test_repro_builds_everything_then_is_clean(built: Built, repo: Path) -> None:
    expected = {"check_params", "generate", "code_digest", "report"}
    expected |= {f"{stage}@{b}" for stage in BASE_STAGES for b in (0, 1)}
    assert built.first_run == expected | VARIANT_RUNS | CONFIRM_RUNS
    assert json.loads(sh(repo, "dvc", "status", "--json")) == {}
    assert ran_stages(sh(repo, "dvc", "repro")) == set()
    assert (repo / "reports" / "summary.md").is_file()


def test_dag_benchmark_times_the_up_to_date_repo(repo: Path) -> None:
    from bench import bench_stages

    sizes = bench_stages.DagSizes(repeats=1, warmup=0)
    _, figures = bench_stages.measure_dag(repo, sizes, train_step_seconds=0.01)
    modules = bench_stages.stage_modules(repo)
    cvae = tiny_params_raw()["cvae"]
    confirm = cvae["confirm"]
    groups = len(cvae["variants"]) * len(cvae["seeds"])
    groups += len(confirm["bases"]) * len(confirm["seeds"])  # confirming groups, same modules
    assert modules["train_cvae"] == groups and modules["evaluate"] == groups
    expected = sum(figures[m] * count for m, count in modules.items())
    assert figures["imports"] == pytest.approx(expected)
    assert all(figures[k] > 0 for k in ("status", "repro", "startup", "load"))
    assert 0 < figures["share"] < 1
    assert ran_stages(sh(repo, "dvc", "repro")) == set()  # timing left the run up to date


def changed_stages(repo: Path) -> set[str]:
    """The stages `dvc status` reports as changed (before anything reruns)."""
    return set(json.loads(sh(repo, "dvc", "status", "--json")))


def edit_function(path: Path, name: str) -> None:
    """Change the body of function `name` in `path` without changing what it does."""
    text = path.read_text()
    head = f"def {name}("
    assert head in text, (path, name)
    path.write_text(text.replace(head, f"def {name}(  # edited\n", 1))


RATES = tuple(repr(float(r)) for r in tiny_params_raw()["cvae"]["rates"])
BASE_STAGES = ("train_base", "surprisal", "normalizer")
VARIANT_RUNS = {
    f"{stage}@0-{v}-{s}"
    for stage in ("train_cvae", "evaluate")
    for v in ("token_mean", "token_share_cc")
    for s in (0, 1)
}
"""Every screening group stage: one per (variant, seed) on base 0, holding every rate."""
CONFIRM_RUNS = {"confirm_train_cvae@1-0", "confirm_evaluate@1-0"}
"""The confirming groups: one per (base, seed) replicate on base 1."""


@pytest.mark.parametrize(
    ("where", "key"),
    [((), "cvea"), (("cvae",), "beta")],
    ids=["top-level typo", "misplaced key"],
)
def test_a_key_no_stage_reads_stops_the_run(repo: Path, where: tuple[str, ...], key: str) -> None:
    path = ".".join((*where, key))
    set_param(repo, path, {"common": {"beta": 0.5}} if key == "cvea" else 0.5)
    done = run(repo, "dvc", "repro")
    assert done.returncode != 0
    assert f"error: {path}: unknown key (known: " in done.stdout + done.stderr
    assert ran_stages(done.stdout + done.stderr) == {"check_params"}
    # the failed run recorded nothing: with the file restored, everything is up to date
    sh(repo, "git", "checkout", "--", "params.yaml")
    assert json.loads(sh(repo, "dvc", "status", "--json")) == {}


def test_retraining_the_base_leaves_everything_downstream_up_to_date(repo: Path) -> None:
    """The base checkpoint holds only what determines the model, so retraining rewrites the
    same bytes and nothing downstream (normalizer, CVAE runs, report) goes stale."""
    done = sh(repo, "dvc", "repro", "-f", "-s", "train_base@0")
    assert ran_stages(done) == {"train_base@0"}
    assert json.loads(sh(repo, "dvc", "status", "--json")) == {}


def test_editing_a_reconstruction_term_changes_only_cvae_runs(repo: Path) -> None:
    edit_function(repo / "src" / "zgain" / "cvae" / "terms.py", "token_share_cc")
    # the groups depend on their code's digest: dvc names it (and the two stages that import the
    # term registry themselves), and once the digest is rebuilt, the groups
    assert changed_stages(repo) == {"code_digest", "check_params", "report"}
    sh(repo, "dvc", "repro", "code_digest")
    changed = changed_stages(repo)
    # check_params reads the term registry too (it names an unknown weight key)
    assert changed and changed <= VARIANT_RUNS | CONFIRM_RUNS | {"report", "check_params"}
    trained = {s for s in changed if "train_cvae@" in s}
    assert trained == {s for s in VARIANT_RUNS | CONFIRM_RUNS if "train_cvae@" in s}
    # the code restored, its digest (rebuilt, or restored from DVC's run-cache) is the committed
    # one byte for byte: nothing is stale
    sh(repo, "git", "checkout", "--", "src")
    sh(repo, "dvc", "repro", "code_digest")
    assert changed_stages(repo) == set()


def test_editing_an_evaluation_metric_changes_only_evaluation(repo: Path) -> None:
    edit_function(repo / "src" / "zgain" / "evaluate" / "estimators.py", "spearman")
    assert changed_stages(repo) == {"code_digest"}
    sh(repo, "dvc", "repro", "code_digest")
    changed = changed_stages(repo)
    assert changed == {s for s in VARIANT_RUNS | CONFIRM_RUNS if "evaluate@" in s}


def test_editing_a_params_error_message_reruns_no_stage(repo: Path) -> None:
    messages = repo / "src" / "zgain" / "params" / "messages.py"
    messages.write_text(
        messages.read_text().replace("must be an integer", "must be a whole number")
    )
    assert changed_stages(repo) == set()


def test_report_code_edit_reruns_only_report(repo: Path) -> None:
    figures = repo / "src" / "zgain" / "report" / "figures.py"
    figures.write_text(figures.read_text() + "\n# edited\n")
    assert changed_stages(repo) == {"report"}
    assert ran_stages(sh(repo, "dvc", "repro")) == {"report"}
    commit(repo, "edit report code")


def test_exp_run_on_one_variant_reruns_only_its_stages(repo: Path) -> None:
    out = sh(repo, "dvc", "exp", "run", "-S", "cvae.variants.token_mean.beta=0.5")
    expected = {f"{stage}@0-token_mean-{s}" for stage in ("train_cvae", "evaluate") for s in (0, 1)}
    # a confirming group trains every contested variant: it reruns with any of them
    assert ran_stages(out) == expected | CONFIRM_RUNS | {"report", "check_params"}
    shown = json.loads(sh(repo, "dvc", "exp", "show", "--json"))
    text = json.dumps(shown)
    assert "reports/capture.json" in text and "token_share_cc" in text
    # per-run and base metrics are plain outputs: the one DVC metric is the report's compact view
    metric_files = json.loads(sh(repo, "dvc", "metrics", "show", "--json"))
    assert list(metric_files[""]["data"]) == ["reports/capture.json"]
    shown = sh(repo, "dvc", "metrics", "show")
    assert max(len(line) for line in shown.splitlines()) <= 200, shown
    capture = json.loads((repo / "reports" / "capture.json").read_text())
    assert list(capture) == [
        # each contested variant's capture over the confirming bases, then the claim over bases
        # of the contested variant against the baseline, and its verdicts
        "token_mean",
        "token_share_cc",
        "dc_token_share_cc",
        "dg_token_share_cc",
        "v_token_share_cc",
    ]


def test_summary_numbers_match_per_example_parquet(repo: Path) -> None:
    metrics = json.loads((repo / "reports" / "metrics.json").read_text())
    assert set(metrics) == {
        "headline_rate",
        "oracle_info",
        "variants",
        "adjusted_to_C",
        "over_bases",
        "verdicts_over_bases",
        "capture_over_bases",
    }
    headline = metrics["headline_rate"]
    assert headline in [float(r) for r in RATES]
    for variant in ("token_mean", "token_share_cc"):
        where = [
            repo / "data" / "eval" / "base0" / variant / f"seed{s}" / f"rate{headline!r}"
            for s in (0, 1)
        ]
        tables = [pd.read_parquet(w / "examples.parquet") for w in where]
        marginal = [(t["surprisal_sum"] - t["nll_marginal"]).mean() for t in tables]
        z_information = [(t["nll_marginal"] - t["nll_post"]).mean() for t in tables]
        reported = metrics["variants"][variant]
        assert reported["marginal_gain"] == pytest.approx(sum(marginal) / 2, rel=1e-9, abs=1e-12)
        assert reported["z_information"] == pytest.approx(
            sum(z_information) / 2, rel=1e-9, abs=1e-12
        )


def test_plots_colour_the_frontier_and_curves_by_series(repo: Path) -> None:
    shown = json.loads(sh(repo, "dvc", "plots", "show", "--json"))
    text = json.dumps(shown)
    for plot in ("frontier_z_information", "learning_kl", "learning_beta"):
        assert plot in text, plot
    assert '"series"' in text and "token_share_cc/seed1" in text


def test_adding_a_seed_reruns_no_existing_group(repo: Path) -> None:
    assert changed_stages_after(repo, "cvae.seeds", [0, 1, 2]) == {
        f"{stage}@0-{v}-2"
        for stage in ("train_cvae", "evaluate")
        for v in ("token_mean", "token_share_cc")
    } | {"check_params", "report"}


def test_adding_a_confirming_seed_reruns_no_base(repo: Path) -> None:
    assert changed_stages_after(repo, "cvae.confirm.seeds", [0, 1]) == {
        "confirm_train_cvae@1-1",
        "confirm_evaluate@1-1",
        "check_params",
        "report",
    }


def test_adding_a_base_adds_its_stages_and_reruns_no_other(repo: Path) -> None:
    """A new base trains, scores and normalizes itself and runs its confirming replicate;
    every existing stage but the report (and the params check) stays up to date."""
    set_param(repo, "base.seeds", [0, 1, 2])
    new = {f"{stage}@2" for stage in BASE_STAGES} | {
        "confirm_train_cvae@2-0",
        "confirm_evaluate@2-0",
    }
    assert changed_stages_after(repo, "cvae.confirm.bases", [1, 2]) == new | {
        "check_params",
        "report",
    }
    assert ran_stages(sh(repo, "dvc", "repro")) == new | {"check_params", "report"}
    procedure = pd.read_csv(repo / "reports" / "tables" / "procedure.csv")
    bases = pd.read_csv(repo / "reports" / "tables" / "bases.csv")
    assert list(bases["base"]) == [0, 1, 2]
    assert set(procedure["a"]) == {"token_share_cc"} and set(procedure["b"]) == {"token_mean"}


def changed_stages_after(repo: Path, key: str, value: object) -> set[str]:
    """The stages `dvc status` lists after setting params key (a.b.c) to value."""
    set_param(repo, key, value)
    return changed_stages(repo)


def test_adding_a_rate_reruns_each_group_once(repo: Path) -> None:
    """A group holds every rate of its (variant, seed): a new rate retrains each group."""
    out = sh(repo, "dvc", "exp", "run", "-S", "cvae.rates=[0.5,1.0,0.75]")
    assert ran_stages(out) == VARIANT_RUNS | {"report", "check_params"}
    summary = (repo / "reports" / "summary.md").read_text()
    assert "target rate C = 0.75" in summary
    # the README's view after a sweep: the capture view and the swept param, nothing elided
    drop, keep = ["--drop", "Created|State|Executor|pairs|.*[./].*"], ["--keep", r"cvae\.rates"]
    # --md: every kept column whole, whatever width dvc detects for a terminal (without one it
    # may fall back to 80 columns and shorten headers with "...")
    view = ["dvc", "exp", "show", "--no-pager", "--md", *drop, *keep]
    shown = sh(repo, *view)
    header = shown.splitlines()[0]
    assert "cvae.rates" in header and "v_token_share_cc" in header  # a verdict always shows
    assert "pairs" not in header and "params.yaml" not in header, header
    # a variant's column shows when it has a value: capture adjusted to C is null where every
    # run of the cell is off its target (the tiny profile's 30 steps rarely reach it)
    capture = json.loads((repo / "reports" / "capture.json").read_text())
    columns = {cell.strip() for cell in header.split("|")}
    for name, value in capture.items():
        assert (name in columns) == (value is not None), (name, value, header)
    assert max(len(line) for line in shown.splitlines()) <= 200, shown


def test_removed_variant_does_not_leak_into_reports(repo: Path) -> None:
    params = yaml.safe_load((repo / "params.yaml").read_text())
    del params["cvae"]["variants"]["token_share_cc"]
    params["cvae"]["confirm"]["variants"] = ["token_mean"]
    (repo / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    sh(repo, "dvc", "repro")
    assert (repo / "data" / "eval" / "base0" / "token_share_cc").is_dir()  # left on disk...
    for path in (repo / "reports").rglob("*"):
        if path.suffix in {".md", ".csv", ".json"}:
            assert "token_share_cc" not in path.read_text(), path  # ...but not reported


def test_zgain_check_passes_an_unchanged_rerun_with_one_screening_seed(repo: Path) -> None:
    """The README's comparison after `make repro`, on a design like the default's: one
    screening seed leaves no interval over seeds, so the check compares run by run and exits 0."""
    set_param(repo, "cvae.seeds", [0])
    assert ran_stages(sh(repo, "dvc", "repro")) <= {"check_params", "report"}
    commit(repo, "one screening seed")
    done = run(repo, "zgain", "check")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "none has an interval (one seed per run)" in done.stdout
    runs = pd.read_csv(repo / "reports" / "tables" / "runs.csv")
    assert len(runs) == 2 * len(RATES)  # two screening variants, one seed, every rate
    assert (
        f"run by run (one seed, no interval): {len(runs)} of {len(runs)} runs equal the "
        "committed run" in done.stdout
    )
    assert "zgain check: pass: 0 of " in done.stdout
