"""The blocks of `params.yaml` from the CVAE on (`cvae`, `evaluate`), and `Params`, the whole file;
`data` lives in zgain.params.data, `paths`, `base` and `surprisal` in zgain.params.upstream."""

from __future__ import annotations

import math
from pathlib import PurePosixPath
from typing import Annotated, Literal

from pydantic import StrictBool, StrictFloat, StrictInt, StrictStr, model_validator

from zgain.core.errors import ParamsError
from zgain.params.data import Data, DataParams, PairsParams
from zgain.params.fields import (
    VARIANT_NAME,
    Block,
    NonNegativeFloat,
    NonNegativeInt,
    OpenUnit,
    PositiveFloat,
    PositiveInt,
    Rate,
    UnitInterval,
    fail,
    raise_all,
    rule,
)
from zgain.params.report import ReportParams, report_errors
from zgain.params.upstream import (
    BaseParams,
    PathParams,
    SurprisalParams,
)


class UnifiedParams(Block):
    """The unified family (docs/method.md#unified), used when a variant weights `unified`."""

    alpha: StrictFloat = 0.0  # token weights ∝ (b_t + eps)^alpha: 0 uniform, 1 share, -1 inverse
    gamma: StrictFloat = 0.0  # example weights (b_i + eps)^-gamma: 0 absolute, 1 fractional
    concentration: StrictBool = False  # apply the concentration correction c_i
    token_sum: StrictBool = False  # token-sum instead of token-mean
    eta: StrictFloat = 0.0  # outer normalizer N^-eta


class AggressiveParams(Block):
    """Aggressive encoder training (docs/method.md#remedies): before each of the first `until`
    joint updates, `encoder_steps` updates of q(z|x,y) alone on the same batch."""

    encoder_steps: PositiveInt
    until: PositiveInt  # steps of the aggressive phase (<= cvae.common.steps)


class VariantParams(Block):
    """One reconstruction variant: the λ of each term, and optional per-variant overrides.

    The weight names are the keys of the term registry (`zgain.cvae.terms.TERMS`), checked
    where the objective is built. The overrides beyond β are the remedies a variant can add
    over its weighting (docs/method.md#remedies).
    """

    weights: dict[StrictStr, NonNegativeFloat]
    unified: UnifiedParams = UnifiedParams()
    beta: NonNegativeFloat | None = None  # overrides cvae.common.beta for this variant
    free_bits: NonNegativeFloat | None = None  # overrides cvae.common.free_bits
    bow_weight: NonNegativeFloat | None = None  # overrides cvae.common.bow_weight
    z_memory: StrictBool | None = None  # overrides cvae.common.model.z_memory (false: z enters
    # through the embedding offset only)
    aggressive: AggressiveParams | None = None  # none: plain joint updates

    @model_validator(mode="after")
    def _some_weight(self) -> VariantParams:
        if not any(v > 0 for v in self.weights.values()):
            raise fail("weights", "needs at least one positive weight", self.weights)
        return self


class CVAEConfig(Block):
    """Latent size, encoder architecture, prior family and what of the decoder to freeze."""

    latent_dim: PositiveInt
    encoder_layers: PositiveInt
    encoder_d_model: PositiveInt
    encoder_heads: PositiveInt
    prior: Literal["standard", "conditional"]
    freeze_decoder: Literal["none", "all", "embeddings"]
    # the encoders add a projection of a frozen copy of the base's hidden states to their
    # token embeddings (docs/method.md#the-cvae)
    encoders_read_base: StrictBool
    # z also enters every decoder layer as an extra attention slot, gated from 0
    # (docs/method.md#how-z-enters-the-decoder)
    z_memory: StrictBool

    @model_validator(mode="after")
    def _heads_divide(self) -> CVAEConfig:
        if self.encoder_d_model % self.encoder_heads:
            raise fail(
                "encoder_heads",
                f"must divide encoder_d_model ({self.encoder_d_model})",
                self.encoder_heads,
            )
        return self


BetaScheduleName = Literal["constant", "linear", "cyclical", "rate_target"]
RateRule = Literal["difference", "log_ratio"]


class RateTargetParams(Block):
    """Dual ascent on log β toward a target KL (docs/method.md#rate-targeted-training).

    After the warm-up, every step: KL_ema ← ema·KL_ema + (1 − ema)·KL_batch, then
    log β ← log β + eta·e, clamped to [log beta_min, log beta_max], with the excess
    e = KL_ema − C (rule `difference`, nats) or log(KL_ema / C) (rule `log_ratio`, scale-free:
    the same relative miss moves β alike at every C). β starts at
    beta_init (a variant's own `beta` overrides it), reached by a linear ramp over
    warmup_steps; C is the run's entry of cvae.rates. From step round(penalty_from · steps) on,
    a positive penalty γ adds γ·|KL_batch − C| to the step's loss: an exact penalty that pins
    the batch KL to C where the multiplier alone swings or cannot push (β ≥ beta_min cannot
    raise a rate).
    """

    rule: RateRule  # the excess: KL_ema − C (difference) or log(KL_ema / C) (log_ratio)
    eta: PositiveFloat  # dual step size on log β, per unit of excess
    ema: Annotated[StrictFloat, rule(lambda v: 0.0 <= v < 1.0, "must be in [0, 1)")]
    beta_init: PositiveFloat  # the initial multiplier, in [beta_min, beta_max]
    beta_min: PositiveFloat
    beta_max: PositiveFloat
    warmup_steps: NonNegativeInt  # steps of the 0 -> beta_init ramp (multiplier held); 0: none
    penalty: NonNegativeFloat = 0.0  # γ of the exact penalty γ·|KL_batch − C|; 0: none
    penalty_from: UnitInterval = 0.0  # the share of cvae.common.steps trained before it applies

    @model_validator(mode="after")
    def _ordered(self) -> RateTargetParams:
        if self.beta_min >= self.beta_max:
            raise fail("beta_max", f"must exceed beta_min ({self.beta_min})", self.beta_max)
        if not self.beta_min <= self.beta_init <= self.beta_max:
            rule = f"must lie in [beta_min, beta_max] = [{self.beta_min}, {self.beta_max}]"
            raise fail("beta_init", rule, self.beta_init)
        return self


class CommonCVAEParams(Block):
    """Settings shared by every CVAE variant (docs/method.md#the-loss-and-kl-schedules)."""

    model: CVAEConfig
    lr: PositiveFloat  # peak Adam learning rate of the encoders, z-injection and BoW head
    decoder_lr: PositiveFloat  # peak learning rate of the decoder copy (well below lr)
    lr_warmup_steps: NonNegativeInt  # linear warm-up of both rates, then cosine decay
    min_lr_ratio: UnitInterval  # both rates decay to this share of their peak
    batch_size: PositiveInt
    steps: PositiveInt
    beta: NonNegativeFloat  # fixed schedules: the β reached (rate_target: see rate_target)
    beta_schedule: BetaScheduleName
    rate_target: RateTargetParams  # the controller of beta_schedule: rate_target
    warmup_steps: NonNegativeInt  # linear schedule: steps to reach beta
    n_cycles: PositiveInt  # cyclical schedule: number of cycles over `steps`
    ramp_fraction: Annotated[
        StrictFloat, rule(lambda v: 0.0 < v <= 1.0, "must be in (0, 1]")
    ]  # cyclical schedule: share of each cycle spent ramping 0 -> beta
    free_bits: NonNegativeFloat  # nats per latent dimension (0 disables)
    bow_weight: NonNegativeFloat  # weight of the bag-of-words auxiliary loss (0 disables)
    eps: PositiveFloat  # nats guarding divisions by surprisal
    log_every: PositiveInt  # steps between dvclive points
    val_every: PositiveInt  # steps between validation passes (G^marg, I^θ on val)
    val_examples: PositiveInt  # validation examples scored at each pass
    val_iw_samples: Annotated[
        StrictInt, rule(lambda v: v >= 2 and v % 2 == 0, "must be even and >= 2")
    ]  # K of the validation passes' defensive-mixture estimate
    # decay of the exponential moving average of the weights that is validated and saved
    # (docs/method.md#the-weight-average); 0 keeps the last iterate
    weight_average: Annotated[StrictFloat, rule(lambda v: 0.0 <= v < 1.0, "must be in [0, 1)")]


class ResolvedVariant(Block):
    """A variant with cvae.common's β and free bits filled in where it does not override them."""

    name: StrictStr
    weights: dict[StrictStr, float]
    unified: UnifiedParams
    beta: float
    free_bits: float
    bow_weight: float
    model: CVAEConfig  # cvae.common.model with the variant's z_memory
    aggressive: AggressiveParams | None


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
        """`common` as a run of the tier trains it: a confirming run takes cvae.confirm.steps
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
