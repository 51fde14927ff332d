"""The blocks of `params.yaml` read before the CVAE: `paths` (and each base's files), `base`
and `surprisal`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath

from pydantic import StrictInt, StrictStr, model_validator

from zgain.core.errors import ParamsError
from zgain.params.fields import (
    Block,
    NonNegativeFloat,
    NonNegativeInt,
    PositiveFloat,
    PositiveInt,
    Probability,
    UnitInterval,
    fail,
    raise_all,
)


class PathParams(Block):
    """Where every stage reads and writes; `dvc.yaml` uses the same keys through ${paths.*}."""

    synthetic_dir: StrictStr  # generate: {train,val,test}.parquet (of either data source)
    pairs_dir: StrictStr  # data.source pairs: the folder of the user's pairs files (a generate dep)
    bases_dir: StrictStr  # train_base@<b>: <b>/base.pt (frozen checkpoint), <b>/base.json
    base_live: StrictStr  # train_base@<b>: <b>/, its dvclive directory
    surprisal_dir: StrictStr  # surprisal@<b>: <b>/tokens.parquet, <b>/examples.parquet
    normalizer_dir: StrictStr  # normalizer@<b>: <b>.json (E[b], E[B], counts, base sha256)
    code_dir: StrictStr  # code_digest: <group stage>.json, the sha256 of each file it imports
    cvae_dir: StrictStr  # train_cvae: base<b>/<variant>/seed<s>/rate<C>.pt (zgain.core.runs)
    cvae_live: StrictStr  # train_cvae: base<b>/<variant>/seed<s>/rate<C>/
    eval_dir: StrictStr  # evaluate: base<b>/<variant>/seed<s>/rate<C>/
    reports_dir: StrictStr  # report: summary.md, tables, figures, metrics.json

    def base(self, seed: int) -> BasePaths:
        """The files of the base trained with `seed` (docs/architecture.md#bases)."""
        folder = PurePosixPath(self.bases_dir) / str(seed)
        return BasePaths(
            seed=seed,
            base_model=str(folder / "base.pt"),
            base_meta=str(folder / "base.json"),
            base_live=str(PurePosixPath(self.base_live) / str(seed)),
            surprisal_dir=str(PurePosixPath(self.surprisal_dir) / str(seed)),
            normalizer=str(PurePosixPath(self.normalizer_dir) / f"{seed}.json"),
        )


@dataclass(frozen=True)
class BasePaths:
    """Where one base's stages write (`train_base@<b>`, `surprisal@<b>`, `normalizer@<b>`)."""

    seed: int
    base_model: str  # frozen base checkpoint
    base_meta: str  # config, metrics and sha256 of the checkpoint
    base_live: str  # dvclive directory of its training
    surprisal_dir: str  # tokens.parquet, examples.parquet
    normalizer: str  # E[b], E[B], counts, base sha256


class TransformerConfig(Block):
    """Architecture of the base LM and so of the CVAE decoder (docs/method.md#the-cvae)."""

    d_model: PositiveInt
    n_layers: PositiveInt
    n_heads: PositiveInt
    d_ff: PositiveInt
    dropout: Probability

    @model_validator(mode="after")
    def _heads_divide(self) -> TransformerConfig:
        if self.d_model % self.n_heads:
            raise fail("n_heads", f"must divide d_model ({self.d_model})", self.n_heads)
        return self


class BaseParams(Block):
    """The frozen bases p_base(y | x): one per seed, each trained the same way."""

    # one base per seed (docs/architecture.md#bases); the first also carries the screening tier
    seeds: tuple[StrictInt, ...]
    model: TransformerConfig
    lr: PositiveFloat  # peak AdamW learning rate
    weight_decay: NonNegativeFloat
    batch_size: PositiveInt
    max_steps: PositiveInt  # hard cap on optimizer steps
    warmup_steps: NonNegativeInt  # linear warm-up, then cosine decay to min_lr_ratio * lr
    min_lr_ratio: UnitInterval
    eval_every: PositiveInt  # steps between validation passes
    patience: PositiveInt  # validation passes without improvement before stopping early

    @model_validator(mode="after")
    def _warmup_fits(self) -> BaseParams:
        errors = []
        if not self.seeds:
            errors.append(fail("seeds", "needs at least one base seed", list(self.seeds)))
        if len(set(self.seeds)) != len(self.seeds):
            errors.append(fail("seeds", "must not repeat a seed", list(self.seeds)))
        if self.warmup_steps > self.max_steps:
            errors.append(fail("warmup_steps", "must be in [0, max_steps]", self.warmup_steps))
        raise_all(errors)
        return self

    @property
    def screening(self) -> int:
        """The base of the screening tier: the first listed."""
        return self.seeds[0]

    def seed(self, value: int) -> int:
        """The listed base seed equal to `value`; ParamsError if base.seeds has none."""
        if value in self.seeds:
            return value
        known = ", ".join(map(str, self.seeds))
        raise ParamsError(f"base.seeds: no base {value!r} (listed: {known})")


class SurprisalParams(Block):
    """Scoring every split with the frozen base."""

    batch_size: PositiveInt
