"""The blocks of `params.yaml` from the CVAE on (`cvae`, `evaluate`), and `Params`, the whole file;
`data` lives in zgain.params.data, `paths`, `base` and `surprisal` in zgain.params.upstream, a
run's variant and shared settings in zgain.params.training."""

from __future__ import annotations

import math
from pathlib import PurePosixPath
from typing import Annotated

from pydantic import StrictInt, StrictStr, model_validator

from zgain.core.errors import ParamsError
from zgain.params.data import Data, DataParams, PairsParams
from zgain.params.fields import (
    VARIANT_NAME,
    Block,
    NonNegativeFloat,
    OpenUnit,
    PositiveInt,
    Rate,
    fail,
    raise_all,
    rule,
)
from zgain.params.report import ReportParams, report_errors
from zgain.params.training import (
    CommonCVAEParams,
    ResolvedVariant,
    VariantParams,
)
from zgain.params.upstream import (
    BaseParams,
    PathParams,
    SurprisalParams,
)


class ConfirmParams(Block):
    """The confirming tier (docs/defaults.md#the-design): the contested variants at the
    headline rates, on every base after the screening one, one stage per (base, seed)."""

    bases: tuple[StrictInt, ...]  # base.seeds after the first (empty: one base, no tier)
    seeds: tuple[StrictInt, ...]  # CVAE seeds per base
    variants: tuple[StrictStr, ...]  # keys of cvae.variants
    rates: tuple[Rate, ...]  # entries of cvae.rates
    # training steps of a confirming run; null: cvae.common.steps (docs/defaults.md#the-design)
    steps: PositiveInt | None = None

    @model_validator(mode="after")
    def _distinct(self) -> ConfirmParams:
        errors = []
        for key in ("bases", "seeds", "variants", "rates"):
            values = getattr(self, key)
            if len(set(values)) != len(values):
                errors.append(fail(key, "must not repeat an entry", list(values)))
            if key != "bases" and not values:
                errors.append(fail(key, "needs at least one entry", list(values)))
        raise_all(errors)
        return self


class CVAEParams(Block):
    seeds: tuple[StrictInt, ...]  # screening tier: every variant and rate once per seed
    # target rates C (nats per example), one run per variant × rate × seed; a fixed β schedule
    # targets no rate, so it takes exactly one entry, which only names the runs' files
    rates: tuple[Rate, ...]
    common: CommonCVAEParams
    variants: dict[StrictStr, VariantParams]
    confirm: ConfirmParams

    @model_validator(mode="after")
    def _consistent(self) -> CVAEParams:
        errors = []
        for name in self.confirm.variants:
            if name not in self.variants:
                known = ", ".join(self.variants)
                errors.append(
                    fail("confirm.variants", f"must name keys of variants ({known})", name)
                )
        for rate in self.confirm.rates:
            if rate not in self.rates:
                known = ", ".join(map(repr, self.rates))
                errors.append(fail("confirm.rates", f"must be entries of rates ({known})", rate))
        if not self.rates:
            errors.append(fail("rates", "needs at least one rate", list(self.rates)))
        if len(set(self.rates)) != len(self.rates):
            errors.append(fail("rates", "must not repeat a rate", list(self.rates)))
        schedule = self.common.beta_schedule
        if schedule != "rate_target" and len(self.rates) > 1:
            errors.append(
                fail(
                    "rates",
                    f"a fixed β schedule ({schedule}) targets no rate: give one entry, which "
                    "only names the runs' files",
                    list(self.rates),
                )
            )
        if not self.seeds:
            errors.append(fail("seeds", "needs at least one seed", list(self.seeds)))
        if len(set(self.seeds)) != len(self.seeds):
            errors.append(fail("seeds", "must not repeat a seed", list(self.seeds)))
        if not self.variants:
            errors.append(fail("variants", "needs at least one variant", self.variants))
        for name in self.variants:
            if not VARIANT_NAME.fullmatch(name):
                rule = "a variant name must be letters, digits, `_` or `-`, first a letter or digit"
                errors.append(fail(f"variants.{name}", rule, name))
        common = self.common
        warmups = {
            "warmup_steps": common.warmup_steps,
            "lr_warmup_steps": common.lr_warmup_steps,
            "rate_target.warmup_steps": common.rate_target.warmup_steps,
        }
        for name, variant in self.variants.items():
            warmups[f"variants.{name}.aggressive.until"] = (
                variant.aggressive.until if variant.aggressive else 0
            )
        limits = {"cvae.common.steps": common.steps}
        if self.confirm.bases and self.confirm.steps is not None:
            limits["cvae.confirm.steps"] = self.confirm.steps
        for key, value in warmups.items():
            for limit, steps in limits.items():
                if value > steps:
                    rule = f"must be <= {limit} ({steps})"
                    errors.append(
                        fail(key if key.startswith("variants.") else f"common.{key}", rule, value)
                    )
        raise_all(errors)
        return self

    def tier_common(self, confirming: bool) -> CommonCVAEParams:
        """`common` as a run of its tier trains it: a confirming run takes cvae.confirm.steps
        when it is set (every schedule spans the run's own steps)."""
        if confirming and self.confirm.steps is not None:
            return self.common.model_copy(update={"steps": self.confirm.steps})
        return self.common

    def rate(self, value: float) -> float:
        """The listed target rate equal to `value`; ParamsError if cvae.rates has none."""
        for rate in self.rates:
            if rate == value:
                return rate
        known = ", ".join(map(repr, self.rates))
        raise ParamsError(f"cvae.rates: no rate {value!r} (listed: {known})")

    def seed(self, value: int) -> int:
        """The listed seed equal to `value`; ParamsError if cvae.seeds has none."""
        if value in self.seeds:
            return value
        known = ", ".join(map(str, self.seeds))
        raise ParamsError(f"cvae.seeds: no seed {value!r} (listed: {known})")

    @property
    def default_beta(self) -> float:
        """The β of a variant without its own: the initial multiplier of a rate_target
        schedule (rate_target.beta_init), else the fixed schedules' cvae.common.beta."""
        common = self.common
        return (
            common.rate_target.beta_init if common.beta_schedule == "rate_target" else common.beta
        )

    def variant(self, name: str) -> ResolvedVariant:
        """The variant `name` with its overrides resolved; ParamsError if there is none."""
        if name not in self.variants:
            raise ParamsError(
                f"cvae.variants.{name}: no such variant (known: {', '.join(self.variants)})"
            )
        raw = self.variants[name]
        return ResolvedVariant(
            name=name,
            weights=dict(raw.weights),
            unified=raw.unified,
            beta=self.default_beta if raw.beta is None else raw.beta,
            free_bits=self.common.free_bits if raw.free_bits is None else raw.free_bits,
            bow_weight=self.common.bow_weight if raw.bow_weight is None else raw.bow_weight,
            model=(
                self.common.model
                if raw.z_memory is None
                else self.common.model.model_copy(update={"z_memory": raw.z_memory})
            ),
            aggressive=raw.aggressive,
        )


class EvaluateParams(Block):
    """Test-split evaluation of one trained CVAE (docs/method.md#evaluation-quantities)."""

    # K samples of the defensive mixture ½q + ½p(z|x): K/2 from each; L is the mean over the
    # K/2 posterior samples, M = −log p̂_K(y|x) uses all K
    iw_samples: Annotated[StrictInt, rule(lambda v: v >= 2 and v % 2 == 0, "must be even and >= 2")]
    batch_size: PositiveInt  # examples per forward pass (each expands to K sequences)
    # a position "reveals the strategy" when the oracle's per-token information exceeds this
    reveal_min_nats: NonNegativeFloat
    probe_test_fraction: OpenUnit
    seed: StrictInt


class Params(Block):
    paths: PathParams
    data: Data
    base: BaseParams
    surprisal: SurprisalParams
    cvae: CVAEParams
    evaluate: EvaluateParams
    report: ReportParams

    @model_validator(mode="after")
    def _consistent(self) -> Params:
        """Values whose valid range depends on another block: every problem, one line each."""
        errors = []
        errors += report_errors(self.report, self.cvae.variants)
        others = list(self.base.seeds[1:])
        if list(self.cvae.confirm.bases) != others:
            text = f"must list base.seeds after the first, in order ({others})"
            errors.append(fail("cvae.confirm.bases", text, list(self.cvae.confirm.bases)))
        if isinstance(self.data, DataParams):
            errors += self._fit_synthetic(self.data)
        else:
            errors += self._fit_pairs(self.data)
        raise_all(errors)
        return self

    def _fit_synthetic(self, data: DataParams) -> list[ValueError]:
        """Sizes that the synthetic world's split sizes bound."""
        errors, common = [], self.cvae.common
        for key, value in (
            ("base.batch_size", self.base.batch_size),
            ("cvae.common.batch_size", common.batch_size),
        ):
            if value > data.n_train:
                errors.append(fail(key, f"must be <= data.n_train ({data.n_train})", value))
        if common.val_examples > data.n_val:
            text = f"must be <= data.n_val ({data.n_val})"
            errors.append(fail("cvae.common.val_examples", text, common.val_examples))
        fraction = self.evaluate.probe_test_fraction
        n_classes = len(data.transforms)
        held_out = math.ceil(fraction * data.n_test)  # how scikit-learn sizes the test part
        if min(held_out, data.n_test - held_out) < n_classes:
            text = (
                f"must leave at least one example per strategy ({n_classes}) in both parts of "
                f"the probe's split of data.n_test ({data.n_test}): "
                f"ceil({data.n_test} × fraction) is {held_out}"
            )
            errors.append(fail("evaluate.probe_test_fraction", text, fraction))
        return errors

    def _fit_pairs(self, data: PairsParams) -> list[ValueError]:
        """The pairs file lies in the folder dvc.yaml tracks (split sizes are checked when the
        file is read, by `generate`)."""
        folder = PurePosixPath(self.paths.pairs_dir)
        if folder not in PurePosixPath(data.file).parents:
            text = f"must lie under paths.pairs_dir ({folder}), the folder `generate` depends on"
            return [fail("data.file", text, data.file)]
        return []
