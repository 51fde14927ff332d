"""Runs and groups: the one place that names a run's files and stages.

A run is one (variant, target rate, seed) CVAE. A group is the runs of one variant and one seed
at every target rate: one `train_cvae@<variant>-<seed>` stage trains them together and one
`evaluate@<variant>-<seed>` stage scores them (docs/architecture.md#runs-and-groups). A group
never spans seeds (adding a seed reruns no existing run) nor variants (editing one variant
reruns only its groups). Each run keeps its own files under its group's folders:

    <cvae_dir>/<variant>/seed<seed>/rate<rate>.pt          checkpoint
    <cvae_live>/<variant>/seed<seed>/rate<rate>/            dvclive curves and summary
    <eval_dir>/<variant>/seed<seed>/rate<rate>/             examples.parquet, metrics.json
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

TRAIN_STAGE = "train_cvae"
EVALUATE_STAGE = "evaluate"
GROUP_STAGES = (TRAIN_STAGE, EVALUATE_STAGE)
"""The per-group stages, in DAG order."""
KL_TARGET_KEY = "kl_target"
"""Key of the KL a run was trained toward (nats per example; None under a fixed β schedule), in
its checkpoint payload and its evaluation's metrics.json."""
ENVIRONMENT_KEY = "environment"
"""Key of what a run actually ran on (`RunEnvironment.as_dict()`) in its metrics files."""


def rate_label(rate: float) -> str:
    """How a target rate names its runs' files, as DVC writes `${item.rate}`: `1.0`, `0.25`."""
    return repr(float(rate))


@dataclass(frozen=True, order=True)
class Group:
    """The runs of one variant and one seed, trained and evaluated by one stage each."""

    variant: str
    seed: int

    @property
    def item(self) -> str:
        """What follows `@` in the group's stage names: `token_mean-0`."""
        return f"{self.variant}-{self.seed}"

    def stage(self, stage: str) -> str:
        """`train_cvae@token_mean-0` for stage `train_cvae`."""
        return f"{stage}@{self.item}"

    def runs(self, rates: Iterable[float]) -> list[Run]:
        """The group's runs, one per target rate, in the order given."""
        return [Run(self.variant, rate, self.seed) for rate in rates]

    def folder(self, root: str | Path) -> Path:
        """`<root>/<variant>/seed<seed>`: the group's folder under `paths.cvae_dir`,
        `paths.cvae_live` or `paths.eval_dir` (each a stage output)."""
        return Path(root) / self.variant / f"seed{self.seed}"


@dataclass(frozen=True, order=True)
class Run:
    """One (variant, target rate, seed) CVAE run and where its files live."""

    variant: str
    rate: float
    seed: int

    @property
    def group(self) -> Group:
        return Group(self.variant, self.seed)

    @property
    def label(self) -> str:
        """How messages and tables name the run: `token_mean C = 1.0 seed 0`."""
        return f"{self.variant} C = {rate_label(self.rate)} seed {self.seed}"

    @property
    def target_rate(self) -> float:
        """The KL the run is trained toward, in nats per example."""
        return self.rate

    def stage(self, stage: str) -> str:
        """The stage that produces this run's files (its group's stage)."""
        return self.group.stage(stage)

    def checkpoint(self, cvae_dir: str | Path) -> Path:
        """The run's checkpoint under `paths.cvae_dir`."""
        return self.group.folder(cvae_dir) / f"rate{rate_label(self.rate)}.pt"

    def live_dir(self, cvae_live: str | Path) -> Path:
        """The run's dvclive folder (curves under plots/metrics/) under `paths.cvae_live`."""
        return self.group.folder(cvae_live) / f"rate{rate_label(self.rate)}"

    def eval_dir(self, eval_dir: str | Path) -> Path:
        """The run's evaluation folder (examples.parquet, metrics.json) under `paths.eval_dir`."""
        return self.group.folder(eval_dir) / f"rate{rate_label(self.rate)}"


def study_runs(variants: Iterable[str], rates: Iterable[float], seeds: Iterable[int]) -> list[Run]:
    """Every run of a study, variant-major, then rate, then seed."""
    rates, seeds = list(rates), list(seeds)
    return [Run(v, r, s) for v in variants for r in rates for s in seeds]
