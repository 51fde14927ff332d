"""The typed schema of `params.yaml` (pydantic v2) and its one loader.

Stages call `load_params()` once at their boundary; below it, code takes these frozen models or
plain values. Every block forbids unknown keys, every field is strictly typed and range-checked,
and all problems are reported at once, one line each: `data.noise: must be in [0, 1), got 1.5`.
The architecture blocks (`base.model`, `cvae.common.model`) *are* the model configs.

This module depends on pydantic and the world's transform names only, so that every stage can
read it without depending on the code of another stage. Names that belong to a later stage's
registry (the reconstruction terms) are checked by that stage (`zgain.cvae.objective`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    ValidationError,
    model_validator,
)
from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from zgain.core.errors import ParamsError
from zgain.world.transforms import TRANSFORMS, min_vocab_size

PARAMS_FILE = "params.yaml"
VARIANT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")
"""A variant name becomes part of stage names, paths and commands: letters, digits, `_`, `-`."""


# --- field types with their rule -----------------------------------------------------------


def _rule(holds: Callable[[Any], bool], rule: str) -> AfterValidator:
    def check(value: Any) -> Any:
        if not holds(value):
            raise ValueError(f"{rule}, got {value!r}")
        return value

    return AfterValidator(check)


PositiveInt = Annotated[StrictInt, _rule(lambda v: v > 0, "must be > 0")]
NonNegativeInt = Annotated[StrictInt, _rule(lambda v: v >= 0, "must be >= 0")]
PositiveFloat = Annotated[StrictFloat, _rule(lambda v: v > 0, "must be > 0")]
NonNegativeFloat = Annotated[StrictFloat, _rule(lambda v: v >= 0, "must be >= 0")]
Probability = Annotated[StrictFloat, _rule(lambda v: 0.0 <= v < 1.0, "must be in [0, 1)")]
OpenUnit = Annotated[StrictFloat, _rule(lambda v: 0.0 < v < 1.0, "must be in (0, 1)")]
UnitInterval = Annotated[StrictFloat, _rule(lambda v: 0.0 <= v <= 1.0, "must be in [0, 1]")]


class Block(BaseModel):
    """A params block: frozen, unknown keys rejected."""

    model_config = ConfigDict(extra="forbid", frozen=True)


def _fail(path: str, rule: str, value: object) -> ValueError:
    """An error whose message `_format` prints as `<path>: <rule>, got <value>`."""
    return ValueError(f"@{path}: {rule}, got {value!r}")


# --- blocks ----------------------------------------------------------------------------------


class PathParams(Block):
    """Where every stage reads and writes; `dvc.yaml` uses the same keys through ${paths.*}."""

    synthetic_dir: StrictStr  # generate: {train,val,test}.parquet
    base_model: StrictStr  # train_base: frozen base checkpoint
    base_meta: StrictStr  # train_base: config, metrics and sha256 of the checkpoint
    base_live: StrictStr  # train_base: dvclive directory
    surprisal_dir: StrictStr  # surprisal: tokens.parquet, examples.parquet
    normalizer: StrictStr  # normalizer: E[b], E[B], counts, base sha256
    cvae_dir: StrictStr  # train_cvae: <variant>/seed<s>.pt
    cvae_live: StrictStr  # train_cvae: dvclive/<variant>/seed<s>
    eval_dir: StrictStr  # evaluate: <variant>/seed<s>/{examples.parquet,metrics.json}
    reports_dir: StrictStr  # report: summary.md, tables, figures, metrics.json


class DataParams(Block):
    """The synthetic world (docs/method.md#the-synthetic-world) and the size of each split."""

    seed: StrictInt  # seed of the generator (each split gets its own stream)
    vocab_size: StrictInt  # V content tokens (PAD, SEP and EOS come on top)
    length_min: Annotated[StrictInt, _rule(lambda v: v >= 1, "must be >= 1")]
    length_max: StrictInt  # x length L ~ Uniform{length_min..length_max}
    transforms: tuple[StrictStr, ...]  # the K strategies y = f_s(x), in label order
    shift: StrictInt  # offset k of the `shift` transform (y_t = x_t + k mod V)
    prior: Literal["uniform", "x_dependent"]  # p(s | x)
    prior_temperature: PositiveFloat  # temperature of the x_dependent prior (lower = peakier)
    noise: Probability  # probability that a y token is replaced by a uniform content token
    n_train: PositiveInt
    n_val: PositiveInt
    n_test: PositiveInt

    @model_validator(mode="after")
    def _consistent(self) -> DataParams:
        errors = []
        if self.length_min > self.length_max:
            errors.append(
                _fail(
                    "length_min",
                    f"must be <= data.length_max ({self.length_max})",
                    self.length_min,
                )
            )
        k = len(self.transforms)
        if k < 2:
            errors.append(_fail("transforms", "needs at least 2 strategies (K >= 2)", k))
        known = sorted(TRANSFORMS)
        for i, name in enumerate(self.transforms):
            if name not in TRANSFORMS:
                errors.append(_fail(f"transforms[{i}]", f"must be one of {known}", name))
        if len(set(self.transforms)) != k:
            errors.append(_fail("transforms", "must not repeat a transform", list(self.transforms)))
        need = min_vocab_size(self.transforms, self.shift)
        if self.vocab_size < need:
            errors.append(
                _fail("vocab_size", f"must be >= {need} for these transforms", self.vocab_size)
            )
        if "shift" in self.transforms and self.shift == 0:
            errors.append(_fail("shift", "must be nonzero (0 makes `shift` a copy)", self.shift))
        if errors:
            raise ValueError("\n".join(str(e) for e in errors))
        return self

    def sizes(self) -> dict[str, int]:
        return {"train": self.n_train, "val": self.n_val, "test": self.n_test}


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
            raise _fail("n_heads", f"must divide d_model ({self.d_model})", self.n_heads)
        return self


class BaseParams(Block):
    """The frozen base model p_base(y | x) and how it is trained."""

    seed: StrictInt
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
        if self.warmup_steps > self.max_steps:
            raise _fail("warmup_steps", "must be in [0, max_steps]", self.warmup_steps)
        return self


class SurprisalParams(Block):
    """Scoring every split with the frozen base."""

    batch_size: PositiveInt


class UnifiedParams(Block):
    """The unified family (docs/method.md#unified), used when a variant weights `unified`."""

    alpha: StrictFloat = 0.0  # token weights ∝ (b_t + eps)^alpha: 0 uniform, 1 share, -1 inverse
    gamma: StrictFloat = 0.0  # example weights (b_i + eps)^-gamma: 0 absolute, 1 fractional
    concentration: StrictBool = False  # apply the concentration correction c_i
    token_sum: StrictBool = False  # token-sum instead of token-mean
    eta: StrictFloat = 0.0  # outer normalizer N^-eta


class VariantParams(Block):
    """One reconstruction variant: the λ of each term, and optional per-variant overrides.

    The weight names are the keys of the term registry (`zgain.cvae.terms.TERMS`), checked
    where the objective is built.
    """

    weights: dict[StrictStr, NonNegativeFloat]
    unified: UnifiedParams = UnifiedParams()
    beta: NonNegativeFloat | None = None  # overrides cvae.common.beta for this variant
    free_bits: NonNegativeFloat | None = None  # overrides cvae.common.free_bits

    @model_validator(mode="after")
    def _some_weight(self) -> VariantParams:
        if not any(v > 0 for v in self.weights.values()):
            raise _fail("weights", "needs at least one positive weight", self.weights)
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
            raise _fail(
                "encoder_heads",
                f"must divide encoder_d_model ({self.encoder_d_model})",
                self.encoder_heads,
            )
        return self


BetaScheduleName = Literal["constant", "linear", "cyclical", "rate_target"]


class RateTargetParams(Block):
    """Dual ascent on log β toward a target KL (docs/method.md#rate-targeted-training).

    After the warm-up, every step: KL_ema ← ema·KL_ema + (1 − ema)·KL_batch, then
    log β ← log β + eta·(KL_ema − C), clamped to [log beta_min, log beta_max]. β starts at
    beta_init (a variant's own `beta` overrides it), reached by a linear ramp over
    warmup_steps; C is the run's entry of cvae.rates.
    """

    eta: PositiveFloat  # dual step size on log β, per nat of KL excess
    ema: Annotated[StrictFloat, _rule(lambda v: 0.0 <= v < 1.0, "must be in [0, 1)")]
    beta_init: PositiveFloat  # the initial multiplier, in [beta_min, beta_max]
    beta_min: PositiveFloat
    beta_max: PositiveFloat
    warmup_steps: NonNegativeInt  # steps of the 0 -> beta_init ramp (multiplier held); 0: none

    @model_validator(mode="after")
    def _ordered(self) -> RateTargetParams:
        if self.beta_min >= self.beta_max:
            raise _fail("beta_max", f"must exceed beta_min ({self.beta_min})", self.beta_max)
        if not self.beta_min <= self.beta_init <= self.beta_max:
            rule = f"must lie in [beta_min, beta_max] = [{self.beta_min}, {self.beta_max}]"
            raise _fail("beta_init", rule, self.beta_init)
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
        StrictFloat, _rule(lambda v: 0.0 < v <= 1.0, "must be in (0, 1]")
    ]  # cyclical schedule: share of each cycle spent ramping 0 -> beta
    free_bits: NonNegativeFloat  # nats per latent dimension (0 disables)
    bow_weight: NonNegativeFloat  # weight of the bag-of-words auxiliary loss (0 disables)
    eps: PositiveFloat  # nats guarding divisions by surprisal
    log_every: PositiveInt  # steps between dvclive points
    val_every: PositiveInt  # steps between validation passes (G^marg, I^θ on val)
    val_examples: PositiveInt  # validation examples scored at each pass
    val_iw_samples: Annotated[
        StrictInt, _rule(lambda v: v >= 2 and v % 2 == 0, "must be even and >= 2")
    ]  # K of the validation passes' defensive-mixture estimate
    # decay of the exponential moving average of the weights that is validated and saved
    # (docs/method.md#the-weight-average); 0 keeps the last iterate
    weight_average: Annotated[StrictFloat, _rule(lambda v: 0.0 <= v < 1.0, "must be in [0, 1)")]


class ResolvedVariant(Block):
    """A variant with cvae.common's β and free bits filled in where it does not override them."""

    name: StrictStr
    weights: dict[StrictStr, float]
    unified: UnifiedParams
    beta: float
    free_bits: float


def _written_as_decimal(value: Any) -> Any:
    # DVC names each run's files from the rate as written; 1 and 1.0 would name two paths.
    if isinstance(value, bool | int):
        raise ValueError(f"must be written as a decimal (1.0, not 1), got {value!r}")
    return value


Rate = Annotated[PositiveFloat, BeforeValidator(_written_as_decimal)]


class CVAEParams(Block):
    seeds: tuple[StrictInt, ...]  # every variant is trained once per seed
    # target rates C (nats per example), one run per variant × rate × seed; a fixed β schedule
    # targets no rate, so it takes exactly one entry, which only names the runs' files
    rates: tuple[Rate, ...]
    common: CommonCVAEParams
    variants: dict[StrictStr, VariantParams]

    @model_validator(mode="after")
    def _consistent(self) -> CVAEParams:
        errors = []
        if not self.rates:
            errors.append(_fail("rates", "needs at least one rate", list(self.rates)))
        if len(set(self.rates)) != len(self.rates):
            errors.append(_fail("rates", "must not repeat a rate", list(self.rates)))
        schedule = self.common.beta_schedule
        if schedule != "rate_target" and len(self.rates) > 1:
            errors.append(
                _fail(
                    "rates",
                    f"a fixed β schedule ({schedule}) targets no rate: give one entry, which "
                    "only names the runs' files",
                    list(self.rates),
                )
            )
        if not self.seeds:
            errors.append(_fail("seeds", "needs at least one seed", list(self.seeds)))
        if len(set(self.seeds)) != len(self.seeds):
            errors.append(_fail("seeds", "must not repeat a seed", list(self.seeds)))
        if not self.variants:
            errors.append(_fail("variants", "needs at least one variant", self.variants))
        for name in self.variants:
            if not VARIANT_NAME.fullmatch(name):
                rule = "a variant name must be letters, digits, `_` or `-`, first a letter or digit"
                errors.append(_fail(f"variants.{name}", rule, name))
        common = self.common
        warmups = {
            "warmup_steps": common.warmup_steps,
            "lr_warmup_steps": common.lr_warmup_steps,
            "rate_target.warmup_steps": common.rate_target.warmup_steps,
        }
        for key, value in warmups.items():
            if value > common.steps:
                rule = f"must be <= cvae.common.steps ({common.steps})"
                errors.append(_fail(f"common.{key}", rule, value))
        if errors:
            raise ValueError("\n".join(str(e) for e in errors))
        return self

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
        )


class EvaluateParams(Block):
    """Test-split evaluation of one trained CVAE (docs/method.md#evaluation-quantities)."""

    # K samples of the defensive mixture ½q + ½p(z|x): K/2 from each; L is the mean over the
    # K/2 posterior samples, M = −log p̂_K(y|x) uses all K
    iw_samples: Annotated[
        StrictInt, _rule(lambda v: v >= 2 and v % 2 == 0, "must be even and >= 2")
    ]
    batch_size: PositiveInt  # examples per forward pass (each expands to K sequences)
    # a position "reveals the strategy" when the oracle's per-token information exceeds this
    reveal_min_nats: NonNegativeFloat
    probe_test_fraction: OpenUnit
    seed: StrictInt


class EquivalenceParams(Block):
    """Margins δ of the verdict `equivalent within ±δ` (docs/method.md#verdicts), per metric."""

    capture: PositiveFloat  # capture share (I^θ / I*)
    z_information: PositiveFloat  # nats per sequence
    marginal_gain: PositiveFloat  # nats per sequence


class ReportParams(Block):
    """Aggregation over seeds and the tables of `reports/`."""

    confidence: OpenUnit  # level of the t-intervals over seeds (seeds are the replicates)
    baseline_variant: StrictStr  # every variant is compared with this one, paired by seed
    leaders: PositiveInt  # the top variants by adjusted capture at a rate, compared pairwise
    equivalence: EquivalenceParams  # δ per metric; also the capture half-width aimed at


class Params(Block):
    paths: PathParams
    data: DataParams
    base: BaseParams
    surprisal: SurprisalParams
    cvae: CVAEParams
    evaluate: EvaluateParams
    report: ReportParams

    @model_validator(mode="after")
    def _consistent(self) -> Params:
        """Values whose valid range depends on another block: every problem, one line each."""
        errors = []
        if self.report.baseline_variant not in self.cvae.variants:
            known = ", ".join(self.cvae.variants)
            errors.append(
                _fail(
                    "report.baseline_variant",
                    f"must name a variant in cvae.variants ({known})",
                    self.report.baseline_variant,
                )
            )
        data, common = self.data, self.cvae.common
        for key, value in (
            ("base.batch_size", self.base.batch_size),
            ("cvae.common.batch_size", common.batch_size),
        ):
            if value > data.n_train:
                errors.append(_fail(key, f"must be <= data.n_train ({data.n_train})", value))
        if common.val_examples > data.n_val:
            rule = f"must be <= data.n_val ({data.n_val})"
            errors.append(_fail("cvae.common.val_examples", rule, common.val_examples))
        fraction = self.evaluate.probe_test_fraction
        n_classes = len(data.transforms)
        held_out = math.ceil(fraction * data.n_test)  # how scikit-learn sizes the test part
        if min(held_out, data.n_test - held_out) < n_classes:
            rule = (
                f"must leave at least one example per strategy ({n_classes}) in both parts of "
                f"the probe's split of data.n_test ({data.n_test}): "
                f"ceil({data.n_test} × fraction) is {held_out}"
            )
            errors.append(_fail("evaluate.probe_test_fraction", rule, fraction))
        if errors:
            raise ValueError("\n".join(str(e) for e in errors))
        return self


# --- error messages ----------------------------------------------------------------------------

_TYPE_RULES = {
    "int_type": "must be an integer",
    "float_type": "must be a number",
    "bool_type": "must be a boolean",
    "string_type": "must be a string",
    "tuple_type": "must be a list",
    "list_type": "must be a list",
    "dict_type": "must be a mapping",
    "model_type": "must be a mapping",
    "model_attributes_type": "must be a mapping",
}


def _join(parts: tuple[Any, ...], *, indices: bool = True) -> str:
    """A key path: `cvae.common.lr`, `data.transforms[1]` (list indices in brackets)."""
    out = ""
    for part in parts:
        if indices and isinstance(part, int) and out:
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


def _block_at(loc: tuple[Any, ...]) -> type[BaseModel] | None:
    """The params block that holds the key at `loc` (to list the keys it knows)."""
    model: type[BaseModel] = Params
    parts = list(loc[:-1])
    while parts:
        field = model.model_fields.get(parts.pop(0))
        if field is None:
            return None
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            model = annotation
            continue
        inner = getattr(annotation, "__args__", ())  # dict[str, Block]: skip the dict's key
        if inner and isinstance(inner[-1], type) and issubclass(inner[-1], BaseModel) and parts:
            parts.pop(0)
            model = inner[-1]
            continue
        return None
    return model


def _format(error: dict[str, Any]) -> list[str]:
    """One `<key path>: <rule>, got <value>` line per pydantic error (a few carry several)."""
    loc = tuple(error["loc"])
    kind = error["type"]
    value = error.get("input")
    if kind == "value_error":
        lines = []
        for line in str(error["ctx"]["error"]).splitlines():
            if line.startswith("@"):  # a block validator: the path is relative to the block
                rel, _, rest = line[1:].partition(": ")
                lines.append(f"{_join((*loc, *rel.split('.')))}: {rest}")
            else:
                lines.append(f"{_join(loc) or '<root>'}: {line}")
        return lines
    if kind == "missing":
        return [f"{_join(loc)}: missing required key"]
    if kind == "extra_forbidden":
        block = _block_at(loc)
        known = ", ".join(sorted(block.model_fields)) if block else "?"
        return [f"{_join(loc, indices=False)}: unknown key (known: {known})"]
    if kind == "invalid_key":
        return [f"{_join(loc, indices=False)}: key must be a string, got {loc[-1]!r}"]
    if kind == "literal_error":
        expected = error["ctx"]["expected"].replace(" or ", ", ")
        return [f"{_join(loc)}: must be one of [{expected}], got {value!r}"]
    if loc and loc[-1] == "[key]":
        return [f"{_join(loc[:-1], indices=False)}: key must be a string, got {loc[-2]!r}"]
    rule = _TYPE_RULES.get(kind, error["msg"])
    return [f"{_join(loc) or '<root>'}: {rule}, got {value!r}"]


def parse_params(raw: object) -> Params:
    """Validate a parsed params mapping; `ParamsError` lists every problem, one line each."""
    try:
        return Params.model_validate(raw)
    except ValidationError as err:
        lines = [line for error in err.errors() for line in _format(error)]
        raise ParamsError(*dict.fromkeys(lines)) from None


def read_yaml(path: str | Path) -> object:
    """Parse YAML as DVC does (YAML 1.2: `2e-3` is a number); ParamsError naming the file."""
    path = Path(path)
    try:
        return YAML(typ="safe", pure=True).load(path.read_text())
    except YAMLError as err:
        raise ParamsError(f"{path}: not valid YAML ({' '.join(str(err).split())})") from None
    except OSError as err:
        raise ParamsError(f"{path}: cannot be read ({err.strerror})") from None


def load_params(path: str | Path = PARAMS_FILE) -> Params:
    """Read and validate `params.yaml` (the one place stages get their configuration)."""
    return parse_params(read_yaml(path))
