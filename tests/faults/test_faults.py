"""Faults a user meets, injected into one real DVC run of the tiny profile.

Each case either stops `dvc repro` with one `error: ...` line naming the problem, or is killed
(SIGKILL) half-way through a write; afterwards `dvc repro` restores a state where `dvc status`
is clean, no temporary of an atomic write is left, and every output has the bytes of the
uninterrupted run (dvc.lock, which records the hash of every output, is unchanged).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from conftest import tiny_params_raw
from dvc_project import commit, make_project, ran_stages, run, sh
from pairs_data import pairs_params

from zgain.core.io import TMP_SUFFIX

pytestmark = pytest.mark.e2e
HOOKS = Path(__file__).parent / "hooks"  # sitecustomize.py: SIGKILL at a chosen rename
VARIANT = "token_mean"
SURPRISAL = "data/surprisal/0"  # the one base's tables
TOKENS = f"{SURPRISAL}/tokens.parquet"
EXAMPLES = f"{SURPRISAL}/examples.parquet"
RATE = 0.5
RUN = "0"  # the seed suffix of the one group: `train_cvae@0-token_mean-0`
CHECKPOINT = f"rate{RATE!r}.pt"  # the group's one run's checkpoint file


def tiny_single_run() -> dict:
    """The tiny profile with one base, one variant and one seed: every stage runs, and
    quickly."""
    raw = tiny_params_raw()
    raw["base"]["seeds"] = [0]
    raw["cvae"]["confirm"].update(bases=[], variants=[VARIANT], rates=[RATE])
    raw["cvae"]["seeds"] = [0]
    raw["cvae"]["rates"] = [RATE]
    raw["cvae"]["variants"] = {VARIANT: raw["cvae"]["variants"][VARIANT]}
    raw["report"]["baseline_variant"] = VARIANT
    return raw


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = make_project(tmp_path_factory.mktemp("faults"), tiny_single_run())
    sh(root, "dvc", "repro")
    commit(root, "uninterrupted run")
    return root


def temporaries(repo: Path) -> list[Path]:
    return sorted(p for p in repo.rglob(f"*{TMP_SUFFIX}") if ".git" not in p.parts)


def lock(repo: Path) -> str:
    return (repo / "dvc.lock").read_text()


def assert_recovered(repo: Path, uninterrupted_lock: str) -> None:
    """`dvc status` clean, git sees nothing new, no temporary, outputs as uninterrupted."""
    assert json.loads(sh(repo, "dvc", "status", "--json")) == {}
    assert sh(repo, "git", "status", "--porcelain") == ""
    assert temporaries(repo) == []
    assert lock(repo) == uninterrupted_lock


def error_lines(done) -> list[str]:
    """The stage's user-error lines; a failed stage must print them without a traceback."""
    output = done.stdout + done.stderr
    assert done.returncode != 0
    assert "Traceback" not in output
    return [line for line in output.splitlines() if line.startswith("error: ")]


def with_params(repo: Path, edit) -> str:
    """Apply `edit` to params.yaml, run `dvc repro`, restore params.yaml; the run's output."""
    path = repo / "params.yaml"
    original = path.read_text()
    params = yaml.safe_load(original)
    edit(params)
    path.write_text(yaml.safe_dump(params, sort_keys=False))
    try:
        done = run(repo, "dvc", "repro")
        lines = error_lines(done)
        assert ran_stages(done.stdout + done.stderr) == {"check_params"}
    finally:
        path.write_text(original)
    return lines


# --- params mistakes: check_params stops the run before any stage --------------------------


def _set(path: str, value):
    def edit(params: dict) -> None:
        *parents, last = path.split(".")
        node = params
        for key in parents:
            node = node[key]
        node[last] = value

    return edit


def _rename_variant(name: str):
    def edit(params: dict) -> None:
        params["cvae"]["variants"] = {name: params["cvae"]["variants"][VARIANT]}
        params["cvae"]["confirm"]["variants"] = [name]
        params["report"]["baseline_variant"] = name

    return edit


PARAMS_CASES = {
    "top-level typo": (_set("cvea", {"common": {"beta": 0.5}}), "error: cvea: unknown key"),
    "misplaced key": (_set("cvae.beta", 0.5), "error: cvae.beta: unknown key"),
    "variant name with a space": (
        _rename_variant("token mean"),
        "error: cvae.variants.token mean: a variant name must be letters, digits, `_` or `-`",
    ),
    "pairs file missing": (
        _set("data", pairs_params("pairs/missing.tsv", oracle=False)),
        "error: data.file: pairs/missing.tsv not found",
    ),
    "probe_test_fraction too small": (
        _set("evaluate.probe_test_fraction", 0.001),
        "error: evaluate.probe_test_fraction: the probe holds out 0.001 of the 120 test examples "
        "and needs >= 4 (one per strategy) on each side: needs data.n_test >= 3001 or a "
        "fraction in (0.025, 0.967], got 0.001",
    ),
}


@pytest.mark.parametrize("case", list(PARAMS_CASES))
def test_a_params_mistake_stops_dvc_repro_with_its_key_path(repo: Path, case: str) -> None:
    before = lock(repo)
    edit, expected = PARAMS_CASES[case]
    lines = with_params(repo, edit)
    assert len(lines) == 1 and lines[0].startswith(expected), lines
    assert not (repo / "pwned").exists()
    assert_recovered(repo, before)


def test_a_bad_variant_name_reaching_its_stage_is_one_line_and_runs_no_shell(repo: Path) -> None:
    """`dvc repro <stage>` skips check_params; the quoted name reaches the stage's own check."""
    path = repo / "params.yaml"
    original = path.read_text()
    params = yaml.safe_load(original)
    _rename_variant("x;touch pwned")(params)
    path.write_text(yaml.safe_dump(params, sort_keys=False))
    try:
        done = run(repo, "dvc", "repro", "-s", f"train_cvae@0-x;touch pwned-{RUN}")
    finally:
        path.write_text(original)
    lines = error_lines(done)
    assert lines == [
        "error: cvae.variants.x;touch pwned: a variant name must be letters, digits, `_` or "
        "`-`, first a letter or digit, got 'x;touch pwned'"
    ]
    assert not (repo / "pwned").exists()
    sh(repo, "git", "checkout", "--", "dvc.lock")  # a failed -s run may leave dvc.lock as is
    assert json.loads(sh(repo, "dvc", "status", "--json")) == {}


def test_a_failed_generate_leaves_the_previous_splits_in_place(repo: Path) -> None:
    """`dvc repro generate` skips check_params; generate fails, and data/ is as it was."""
    before = lock(repo)
    path = repo / "params.yaml"
    original = path.read_text()
    params = yaml.safe_load(original)
    _set("data", pairs_params("pairs/missing.tsv", oracle=False))(params)
    path.write_text(yaml.safe_dump(params, sort_keys=False))
    try:
        done = run(repo, "dvc", "repro", "-s", "generate")
    finally:
        path.write_text(original)
    assert error_lines(done) == ["error: pairs/missing.tsv: file not found"]
    sh(repo, "git", "checkout", "--", "dvc.lock")
    assert_recovered(repo, before)


# --- bad surprisal tables: the stage that reads them stops naming the file ----------------


def _edit_examples(column: str, value: float):
    def corrupt(repo: Path) -> None:
        path = repo / EXAMPLES
        table = pq.read_table(path)
        values = table[column].to_pylist()
        values[7] = value
        index = table.schema.get_field_index(column)
        table = table.set_column(index, column, pa.array(values, pa.float64()))
        path.unlink()  # the workspace file may be a link into the DVC cache
        pq.write_table(table, path)

    return corrupt


def _truncate_tokens(repo: Path) -> None:
    path = repo / TOKENS
    data = path.read_bytes()
    path.unlink()
    path.write_bytes(data[: len(data) // 2])


TABLE_CASES = {
    "NaN surprisal_mean": (_edit_examples("surprisal_mean", math.nan), EXAMPLES, "is nan"),
    "negative surprisal_mean": (_edit_examples("surprisal_mean", -0.5), EXAMPLES, "is -0.5"),
    "truncated tokens.parquet": (_truncate_tokens, TOKENS, "not a readable Parquet file"),
}


@pytest.mark.parametrize("case", list(TABLE_CASES))
def test_a_bad_surprisal_table_stops_the_normalizer_naming_the_file(repo: Path, case: str) -> None:
    before = lock(repo)
    corrupt, file, fragment = TABLE_CASES[case]
    corrupt(repo)
    lines = error_lines(run(repo, "dvc", "repro", "-s", "normalizer@0"))
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"error: {file}: ") and fragment in lines[0], lines
    sh(repo, "dvc", "checkout", "--force", SURPRISAL)
    sh(repo, "dvc", "repro")
    assert_recovered(repo, before)


# --- SIGKILL half-way through a write ------------------------------------------------------


def killed_at(repo: Path, suffix: str, *args: str):
    """`dvc repro *args` whose stage process is SIGKILLed at the rename onto `...suffix`."""
    env = {"PYTHONPATH": f"{HOOKS}:{repo / 'src'}", "ZGAIN_FAULTS_KILL_AT": suffix}
    done = run(repo, "dvc", "repro", *args, env=env)
    assert done.returncode != 0, done.stdout + done.stderr
    return done


def test_a_kill_during_a_checkpoint_save_recovers_on_the_next_repro(repo: Path) -> None:
    before = lock(repo)
    stage = f"train_cvae@0-{VARIANT}-{RUN}"
    killed_at(repo, CHECKPOINT, "-f", "-s", stage)
    left = temporaries(repo)
    assert [p.name.startswith(f".{CHECKPOINT}.") for p in left] == [True]
    assert not (repo / "models" / "cvae" / "base0" / VARIANT / "seed0" / CHECKPOINT).exists()
    assert sh(repo, "git", "status", "--porcelain") == ""  # git ignores the temporary
    # DVC restores the stage from its run cache (or reruns it): same bytes, so the evaluation
    # downstream stays valid and nothing else runs
    assert ran_stages(sh(repo, "dvc", "repro")) <= {stage}
    assert json.loads(sh(repo, "dvc", "status", "--json")) == {}
    assert lock(repo) == before
    # the temporary changes no hash; the stage sweeps it when it next runs
    assert ran_stages(sh(repo, "dvc", "repro", "-f", "-s", stage)) == {stage}
    assert_recovered(repo, before)


def test_a_temporary_in_a_directory_dependency_changes_no_hash(repo: Path) -> None:
    before = lock(repo)
    leftover = (
        repo
        / "data"
        / "eval"
        / "base0"
        / VARIANT
        / "seed0"
        / f"rate{RATE!r}"
        / f".metrics.json.x1{TMP_SUFFIX}"
    )
    leftover.write_text("half a file")
    assert json.loads(sh(repo, "dvc", "status", "--json")) == {}  # report's data/eval dep
    assert sh(repo, "git", "status", "--porcelain") == ""
    stage = f"evaluate@0-{VARIANT}-{RUN}"
    assert ran_stages(sh(repo, "dvc", "repro", "-f", "-s", stage)) == {stage}
    assert_recovered(repo, before)  # swept by the stage that owns the directory


def _report_files(repo: Path) -> dict[str, bytes]:
    root = repo / "reports"
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_a_kill_during_report_keeps_the_previous_report(repo: Path) -> None:
    before, previous = lock(repo), _report_files(repo)
    assert "summary.md" in previous and any(k.startswith("figures/") for k in previous)
    killed_at(repo, "metrics.json", "-f", "-s", "report")
    assert _report_files(repo) == previous  # DVC kept the persist outputs; nothing swapped
    # what is left is the half-built report, beside reports/ (ignored by git and DVC)
    assert {p.relative_to(repo).parts[0][: len(".reports.")] for p in temporaries(repo)} == {
        ".reports."
    }
    assert json.loads(sh(repo, "dvc", "status", "--json")) == {}
    assert ran_stages(sh(repo, "dvc", "repro", "-f", "-s", "report")) == {"report"}
    assert _report_files(repo) == previous
    assert_recovered(repo, before)
