"""The blocks of one CVAE run in `params.yaml`: a variant's weighting and overrides
(`cvae.variants.<name>`), the model, the rate controller and the settings every variant shares
(`cvae.common`); the tiers and `Params` live in zgain.params.blocks."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import StrictBool, StrictFloat, StrictInt, StrictStr, model_validator

from zgain.params.fields import (
    Block,
    NonNegativeFloat,
    NonNegativeInt,
    PositiveFloat,
    PositiveInt,
    UnitInterval,
    fail,
    rule,
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
