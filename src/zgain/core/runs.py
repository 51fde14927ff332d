"""Runs and groups: the one place that names a run's files and stages.

A run is one (variant, target rate, seed) CVAE on one base. A group is the runs one stage
trains together and one stage scores (docs/architecture.md#runs-and-groups):

- a screening group, the runs of one variant and one seed at every target rate on the
  screening base: `train_cvae@<base>-<variant>-<seed>` and `evaluate@<base>-<variant>-<seed>`;
- a confirming group, the runs of every contested variant at the headline rates for one
  (base, seed) replicate: `confirm_train_cvae@<base>-<seed>` and
  `confirm_evaluate@<base>-<seed>`.

A group never spans seeds or bases (adding a seed or a base reruns no existing run), and a
screening group never spans variants. Each run keeps its own files under its group's folders:

    <cvae_dir>/base<b>/<variant>/seed<s>/rate<C>.pt             screening checkpoint
    <cvae_dir>/base<b>/confirm-seed<s>/<variant>/rate<C>.pt     confirming checkpoint

and likewise `<cvae_live>/…/rate<C>/` (dvclive curves) and `<eval_dir>/…/rate<C>/`
(EXAMPLES_FILE, METRICS_FILE).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

TRAIN_STAGE = "train_cvae"
EVALUATE_STAGE = "evaluate"
GROUP_STAGES = (TRAIN_STAGE, EVALUATE_STAGE)
"""The per-group stages, in DAG order."""
CONFIRM_PREFIX = "confirm_"
"""A confirming group's stages are its screening counterparts' names with this prefix."""
KL_TARGET_KEY = "kl_target"
"""Key of the KL a run was trained toward (nats per example; None under a fixed β schedule), in
its checkpoint payload and its evaluation's metrics.json."""
ENVIRONMENT_KEY = "environment"
"""Key of what a run actually ran on (`RunEnvironment.as_dict()`) in its metrics files."""
EXAMPLES_FILE = "examples.parquet"
"""A run's per-example scores in its evaluation folder (zgain.evaluate.schema.EVAL_SCHEMA)."""
METRICS_FILE = "metrics.json"
"""A run's metrics in its evaluation folder, with the environment that evaluated it."""


class Tier(StrEnum):
    """Which group trains a run: the screening group of its (variant, seed) on the screening
    base, or the confirming group of its (base, seed) replicate."""

    SCREENING = "screening"
    CONFIRMING = "confirming"


def rate_label(rate: float) -> str:
    """How a target rate names its runs' files, as DVC writes `${item.rate}`: `1.0`, `0.25`."""
    return repr(float(rate))


@dataclass(frozen=True)
class Group:
    """The runs one stage trains and one scores: a screening group names its variant
    (`Group.screening`), the confirming group of replicate (base, seed) none
    (`Group.confirming_of`)."""

    base: int
    seed: int
    tier: Tier
    variant: str | None = None

    def __post_init__(self) -> None:
        if (self.variant is None) != (self.tier is Tier.CONFIRMING):
            raise ValueError(f"a {self.tier} group with variant {self.variant!r}")

    @classmethod
    def screening(cls, base: int, variant: str, seed: int) -> Group:
        return cls(base, seed, Tier.SCREENING, variant)

    @classmethod
    def confirming_of(cls, base: int, seed: int) -> Group:
        return cls(base, seed, Tier.CONFIRMING)

    @property
    def confirming(self) -> bool:
        return self.tier is Tier.CONFIRMING

    @property
    def item(self) -> str:
        """What follows `@` in the group's stage names: `0-token_mean-0`, or `1-0`."""
        if self.confirming:
            return f"{self.base}-{self.seed}"
        return f"{self.base}-{self.variant}-{self.seed}"

    def stage(self, stage: str) -> str:
        """`train_cvae@0-token_mean-0`, or `confirm_train_cvae@1-0`, for stage `train_cvae`."""
        prefix = CONFIRM_PREFIX if self.confirming else ""
        return f"{prefix}{stage}@{self.item}"

    def runs(self, rates: Iterable[float], variants: Iterable[str] = ()) -> list[Run]:
        """The group's runs: one per rate (screening), or per variant and rate (confirming)."""
        rates = list(rates)
        if self.variant is not None:
            return [Run(self.variant, rate, self.seed, self.base) for rate in rates]
        tier = Tier.CONFIRMING
        return [Run(v, rate, self.seed, self.base, tier) for v in variants for rate in rates]

    def folder(self, root: str | Path) -> Path:
        """The group's folder under `paths.cvae_dir`, `paths.cvae_live` or `paths.eval_dir`
        (each a stage output): `<root>/base<b>/<variant>/seed<s>` or
        `<root>/base<b>/confirm-seed<s>`."""
        base = Path(root) / f"base{self.base}"
        if self.variant is None:  # the confirming group
            return base / f"confirm-seed{self.seed}"
        return base / self.variant / f"seed{self.seed}"


@dataclass(frozen=True, order=True)
class Run:
    """One (variant, target rate, seed) CVAE run on base `base`, trained by a group of `tier`,
    and where its files live."""

    variant: str
    rate: float
    seed: int
    base: int
    tier: Tier = Tier.SCREENING

    @property
    def confirming(self) -> bool:
        return self.tier is Tier.CONFIRMING

    @property
    def group(self) -> Group:
        if self.confirming:
            return Group.confirming_of(self.base, self.seed)
        return Group.screening(self.base, self.variant, self.seed)

    @property
    def label(self) -> str:
        """How messages and tables name the run: `token_mean C = 1.0 seed 0 base 0`."""
        return f"{self.variant} C = {rate_label(self.rate)} seed {self.seed} base {self.base}"

    @property
    def target_rate(self) -> float:
        """The KL the run is trained toward, in nats per example."""
        return self.rate

    def stage(self, stage: str) -> str:
        """The stage that produces this run's files (its group's stage)."""
        return self.group.stage(stage)

    def _folder(self, root: str | Path) -> Path:
        folder = self.group.folder(root)
        return folder / self.variant if self.confirming else folder

    def checkpoint(self, cvae_dir: str | Path) -> Path:
        """The run's checkpoint under `paths.cvae_dir`."""
        return self._folder(cvae_dir) / f"rate{rate_label(self.rate)}.pt"

    def live_dir(self, cvae_live: str | Path) -> Path:
        """The run's dvclive folder (curves under plots/metrics/) under `paths.cvae_live`."""
        return self._folder(cvae_live) / f"rate{rate_label(self.rate)}"

    def eval_dir(self, eval_dir: str | Path) -> Path:
        """The run's evaluation folder (EXAMPLES_FILE, METRICS_FILE) under `paths.eval_dir`."""
        return self._folder(eval_dir) / f"rate{rate_label(self.rate)}"

    def eval_examples(self, eval_dir: str | Path) -> Path:
        """The run's per-example scores under `paths.eval_dir`."""
        return self.eval_dir(eval_dir) / EXAMPLES_FILE

    def eval_metrics(self, eval_dir: str | Path) -> Path:
        """The run's metrics under `paths.eval_dir`."""
        return self.eval_dir(eval_dir) / METRICS_FILE


def replicate_runs(
    variants: Iterable[str], rate: float, replicates: Iterable[tuple[int, int]], screening: int
) -> list[Run]:
    """The runs of `variants` at `rate` for each (base, seed) replicate: the screening
    group's on the screening base, the confirming group's on every other."""
    variants = list(variants)
    tier = lambda base: Tier.SCREENING if base == screening else Tier.CONFIRMING  # noqa: E731
    return [Run(v, rate, seed, base, tier(base)) for base, seed in replicates for v in variants]
