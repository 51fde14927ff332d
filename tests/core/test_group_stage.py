"""Tests for the group stages' command line and layout: a bad group fails before any CPU wait,
and a screening or confirming group runs exactly its runs (docs/architecture.md#runs-and-groups)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from zgain.core import group_stage
from zgain.core.errors import ParamsError
from zgain.core.io import TMP_SUFFIX
from zgain.core.runs import Group, Run, Tier
from zgain.params import Params, load_params

# params.yaml's own design: its first base screens, its last confirming base stands for the
# confirming tier, and its confirming seeds are [0]
CONFIRMING = load_params().cvae.confirm.bases
LAST, LISTED = CONFIRMING[-1], ", ".join(map(str, CONFIRMING))


@pytest.fixture(scope="module")
def params() -> Params:
    return load_params()


@pytest.fixture
def no_cpu_claim(monkeypatch: pytest.MonkeyPatch) -> list[int | None]:
    claims: list[int | None] = []
    monkeypatch.setattr(group_stage, "divide_cpus_by_default", claims.append)
    return claims


BAD_GROUPS = [
    (0, "nope", 0, "cvae.variants.nope: no such variant"),
    (0, "token_mean", 99, "cvae.seeds: no seed 99"),
    (9, "token_mean", 0, "base.seeds: no base 9"),
    (1, "token_mean", 0, "--base 1: screening groups train on base 0 only"),
    (0, None, 0, f"cvae.confirm.bases: no base 0 (listed: {LISTED})"),
    (9, None, 0, "base.seeds: no base 9"),
    (LAST, None, 1, "cvae.confirm.seeds: no seed 1 (listed: 0)"),
]


@pytest.mark.parametrize(
    ("base", "variant", "seed", "named"), BAD_GROUPS, ids=[b[3] for b in BAD_GROUPS]
)
def test_an_unlisted_group_stops_before_claiming_cpus(
    no_cpu_claim: list, base: int, variant: str | None, seed: int, named: str
) -> None:
    ran: list[tuple] = []
    main = group_stage.group_main(lambda *args, **options: ran.append(args))
    with pytest.raises(ParamsError, match="^" + re.escape(named)):
        main(base, seed, variant)
    assert no_cpu_claim == [] and ran == []


@pytest.mark.parametrize(("base", "variant", "seed"), [(0, "token_mean", 0), (LAST, None, 0)])
def test_a_listed_group_claims_cpus_then_runs(
    no_cpu_claim: list, base: int, variant: str | None, seed: int
) -> None:
    ran: list[tuple] = []
    main = group_stage.group_main(lambda params, group, **options: ran.append((group, options)))
    main(base, seed, variant, None, 2)
    group = (
        Group.confirming_of(base, seed) if variant is None else Group.screening(base, variant, seed)
    )
    assert no_cpu_claim == [2] and ran == [(group, {"device": None, "threads": 2})]


def test_resolve_group_names_the_stages_of_each_tier(params: Params) -> None:
    screening = group_stage.resolve_group(params, 0, "token_mean", 0)
    assert screening == Group(0, 0, Tier.SCREENING, "token_mean") and not screening.confirming
    assert screening.stage("train_cvae") == "train_cvae@0-token_mean-0"
    assert screening.stage("evaluate") == "evaluate@0-token_mean-0"
    confirming = group_stage.resolve_group(params, LAST, None, 0)
    assert confirming == Group(LAST, 0, Tier.CONFIRMING) and confirming.confirming
    assert confirming.stage("train_cvae") == f"confirm_train_cvae@{LAST}-0"
    assert confirming.stage("evaluate") == f"confirm_evaluate@{LAST}-0"


def _runs_of(
    params: Params, root: Path, base: int, variant: str | None, seed: int, **options
) -> list[Run]:
    """The runs run_group hands its task, in one process; outputs under `root` only."""

    def task(params: Params, runs: list[Run], threads: int, *, device: str | None) -> list[Run]:
        return list(runs)

    def outputs(params: Params, one: Run) -> list[Path]:
        return [one.checkpoint(root)]

    group = (
        Group.confirming_of(base, seed) if variant is None else Group.screening(base, variant, seed)
    )
    return group_stage.run_group(params, group, task, outputs, device="cpu", threads=1, **options)


def test_a_screening_group_runs_its_variant_at_every_rate(params: Params, tmp_path: Path) -> None:
    runs = _runs_of(params, tmp_path, 0, "mean_tok", 0)
    assert runs == [Run("mean_tok", rate, 0, 0) for rate in params.cvae.rates]
    last = params.cvae.rates[-1]
    assert _runs_of(params, tmp_path, 0, "mean_tok", 0, rates=[last]) == [
        Run("mean_tok", last, 0, 0)
    ]
    with pytest.raises(ParamsError, match=r"^cvae\.rates: no rate 0\.3"):
        _runs_of(params, tmp_path, 0, "mean_tok", 0, rates=[0.3])
    first = f"base0/mean_tok/seed0/rate{params.cvae.rates[0]!r}"
    assert runs[0].checkpoint("cvae") == Path(f"cvae/{first}.pt")
    assert runs[0].live_dir("live") == Path(f"live/{first}")
    assert runs[0].eval_dir("eval") == Path(f"eval/{first}")


def test_a_confirming_group_runs_its_variants_at_its_rates(params: Params, tmp_path: Path) -> None:
    confirm = params.cvae.confirm
    runs = _runs_of(params, tmp_path, 2, None, 0)
    assert runs == [
        Run(variant, rate, 0, 2, Tier.CONFIRMING)
        for variant in confirm.variants
        for rate in confirm.rates
    ]
    assert {run.group for run in runs} == {Group.confirming_of(2, 0)}
    assert {run.stage("train_cvae") for run in runs} == {"confirm_train_cvae@2-0"}
    for run in runs:
        where = f"base2/confirm-seed0/{run.variant}"
        assert run.checkpoint("cvae") == Path(f"cvae/{where}/rate{run.rate!r}.pt")
        assert run.live_dir("live") == Path(f"live/{where}/rate{run.rate!r}")
        assert run.eval_dir("eval") == Path(f"eval/{where}/rate{run.rate!r}")


def test_a_group_names_its_variant_exactly_when_it_screens() -> None:
    """The tier is explicit: a screening group without a variant, or a confirming group with
    one, is refused rather than read as the other tier."""
    with pytest.raises(ValueError, match="a screening group with variant None"):
        Group(0, 0, Tier.SCREENING)
    with pytest.raises(ValueError, match="a confirming group with variant 'token_mean'"):
        Group(1, 0, Tier.CONFIRMING, "token_mean")
    assert Run("token_mean", 1.0, 0, 1, Tier.CONFIRMING).group == Group.confirming_of(1, 0)


def test_a_runs_evaluation_files_are_named_on_the_run() -> None:
    run = Run("token_mean", 1.0, 2, 1, Tier.CONFIRMING)
    folder = Path("eval/base1/confirm-seed2/token_mean/rate1.0")
    assert run.eval_examples("eval") == folder / "examples.parquet"
    assert run.eval_metrics("eval") == folder / "metrics.json"


def test_screening_and_confirming_runs_never_share_files() -> None:
    """The same (variant, rate, seed) on two bases, or in either tier, keeps its own files."""
    runs = [
        Run("token_mean", 1.0, 0, 0),
        Run("token_mean", 1.0, 0, 1),
        Run("token_mean", 1.0, 0, 0, Tier.CONFIRMING),
        Run("token_mean", 1.0, 0, 1, Tier.CONFIRMING),
        Run("mean_tok", 1.0, 0, 1, Tier.CONFIRMING),
    ]
    for place in (Run.checkpoint, Run.live_dir, Run.eval_dir):
        assert len({place(run, "root") for run in runs}) == len(runs)


def test_a_group_sweeps_its_runs_leftovers_only(params: Params, tmp_path: Path) -> None:
    """A killed attempt's temporaries beside each run's output go; another group's stay."""
    mine = Run("token_mean", 1.0, 0, LAST, Tier.CONFIRMING).checkpoint(tmp_path)
    other = Run("token_mean", 1.0, 0, 1, Tier.CONFIRMING).checkpoint(tmp_path)
    leftovers = []
    for output in (mine, other):
        output.parent.mkdir(parents=True)
        leftover = output.parent / f".{output.name}.x{TMP_SUFFIX}"
        leftover.write_text("half")
        leftovers.append(leftover)
    _runs_of(params, tmp_path, LAST, None, 0)
    assert not leftovers[0].exists() and leftovers[1].exists()
