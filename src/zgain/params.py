"""Typed, validated views of `params.yaml`: one frozen dataclass per block.

Stages call `load_params()` once at their boundary; below it, code takes these objects or
plain values. Each `validate(path)` states the ranges a researcher could get wrong.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import yaml

from zgain.config import ParamsError, load_dataclass, require
from zgain.synthetic import TRANSFORMS, World, min_vocab_size
from zgain.terms import RECON_TERMS

Device = Literal["auto", "cpu", "cuda", "mps"]
PARAMS_FILE = "params.yaml"


@dataclass(frozen=True)
class PathParams:
    """Where every stage reads and writes; `dvc.yaml` uses the same keys through ${paths.*}."""

    synthetic_dir: str  # generate: {train,val,test}.parquet
    base_model: str  # train_base: frozen base checkpoint
    base_meta: str  # train_base: config, metrics and sha256 of the checkpoint
    base_live: str  # train_base: dvclive directory
    surprisal_dir: str  # surprisal: tokens.parquet, examples.parquet
    normalizer: str  # normalizer: E[b], E[B], counts, base sha256
    cvae_dir: str  # train_cvae: <variant>/seed<s>.pt
    cvae_live: str  # train_cvae: dvclive/<variant>/seed<s>
    eval_dir: str  # evaluate: <variant>/seed<s>/{examples.parquet,metrics.json}
    reports_dir: str  # report: summary.md, tables, figures, metrics.json


@dataclass(frozen=True)
class DataParams:
    """The synthetic world of SPEC §3."""

    seed: int  # seed of the generator (each split gets its own stream)
    vocab_size: int  # V content tokens (PAD, SEP and EOS come on top)
    length_min: int  # x length L ~ Uniform{length_min..length_max}
    length_max: int
    transforms: tuple[str, ...]  # the K strategies y = f_s(x), in label order
    shift: int  # offset k of the `shift` transform (y_t = x_t + k mod V)
    prior: Literal["uniform", "x_dependent"]  # p(s | x)
    prior_temperature: float  # temperature of the x_dependent prior (lower = more peaked)
    noise: float  # probability that a y token is replaced by a uniform content token
    n_train: int
    n_val: int
    n_test: int

    def validate(self, path: str) -> None:
        require(self.length_min >= 1, f"{path}.length_min", "must be >= 1", self.length_min)
        require(
            self.length_min <= self.length_max,
            f"{path}.length_min",
            f"must be <= {path}.length_max ({self.length_max})",
            self.length_min,
        )
        k = len(self.transforms)
        require(k >= 2, f"{path}.transforms", "needs at least 2 strategies (K >= 2)", k)
        for i, name in enumerate(self.transforms):
            require(
                name in TRANSFORMS,
                f"{path}.transforms[{i}]",
                f"must be one of {sorted(TRANSFORMS)}",
                name,
            )
        require(
            len(set(self.transforms)) == k,
            f"{path}.transforms",
            "must not repeat a transform",
            list(self.transforms),
        )
        need = min_vocab_size(self.transforms, self.shift)
        require(
            self.vocab_size >= need,
            f"{path}.vocab_size",
            f"must be >= {need} for these transforms",
            self.vocab_size,
        )
        if "shift" in self.transforms:
            require(
                self.shift != 0,
                f"{path}.shift",
                "must be nonzero (0 makes `shift` a copy)",
                self.shift,
            )
        require(0.0 <= self.noise < 1.0, f"{path}.noise", "must be in [0, 1)", self.noise)
        require(
            self.prior_temperature > 0,
            f"{path}.prior_temperature",
            "must be > 0",
            self.prior_temperature,
        )
        for name in ("n_train", "n_val", "n_test"):
            value = getattr(self, name)
            require(value > 0, f"{path}.{name}", "must be > 0", value)

    def world(self) -> World:
        return World(
            vocab_size=self.vocab_size,
            length_min=self.length_min,
            length_max=self.length_max,
            transforms=self.transforms,
            shift=self.shift,
            prior=self.prior,
            prior_temperature=self.prior_temperature,
            noise=self.noise,
        )

    def sizes(self) -> dict[str, int]:
        return {"train": self.n_train, "val": self.n_val, "test": self.n_test}


@dataclass(frozen=True)
class BaseParams:
    """The frozen base model p_base(y | x) and how it is trained (SPEC §5)."""

    seed: int
    d_model: int
    n_layers: int
    n_heads: int
    d_ff: int
    dropout: float
    lr: float  # peak AdamW learning rate
    weight_decay: float
    batch_size: int
    max_steps: int  # hard cap on optimizer steps
    warmup_steps: int  # linear warm-up, then cosine decay to min_lr_ratio * lr
    min_lr_ratio: float
    eval_every: int  # steps between validation passes
    patience: int  # validation passes without improvement before stopping early
    device: Device
    threads: int  # torch intra-op threads (0 = leave torch's default)

    def validate(self, path: str) -> None:
        for name in (
            "d_model",
            "n_layers",
            "n_heads",
            "d_ff",
            "batch_size",
            "max_steps",
            "eval_every",
            "patience",
        ):
            value = getattr(self, name)
            require(value > 0, f"{path}.{name}", "must be > 0", value)
        require(
            self.d_model % self.n_heads == 0,
            f"{path}.n_heads",
            f"must divide d_model ({self.d_model})",
            self.n_heads,
        )
        require(0.0 <= self.dropout < 1.0, f"{path}.dropout", "must be in [0, 1)", self.dropout)
        require(self.lr > 0, f"{path}.lr", "must be > 0", self.lr)
        require(self.weight_decay >= 0, f"{path}.weight_decay", "must be >= 0", self.weight_decay)
        require(
            0 <= self.warmup_steps <= self.max_steps,
            f"{path}.warmup_steps",
            "must be in [0, max_steps]",
            self.warmup_steps,
        )
        require(
            0.0 <= self.min_lr_ratio <= 1.0,
            f"{path}.min_lr_ratio",
            "must be in [0, 1]",
            self.min_lr_ratio,
        )
        require(self.threads >= 0, f"{path}.threads", "must be >= 0", self.threads)


@dataclass(frozen=True)
class SurprisalParams:
    """Scoring every split with the frozen base."""

    batch_size: int
    device: Device
    threads: int

    def validate(self, path: str) -> None:
        require(self.batch_size > 0, f"{path}.batch_size", "must be > 0", self.batch_size)
        require(self.threads >= 0, f"{path}.threads", "must be >= 0", self.threads)


@dataclass(frozen=True)
class UnifiedParams:
    """The unified aggregation family of SPEC §4.8 (used when a variant weights `unified`)."""

    alpha: float = 0.0  # token weights ∝ (b_t + eps)^alpha: 0 uniform, 1 share, -1 inverse
    gamma: float = 0.0  # example weights (b_i + eps)^-gamma: 0 absolute, 1 fractional
    concentration: bool = False  # apply the concentration correction c_i
    token_sum: bool = False  # token-sum instead of token-mean
    eta: float = 0.0  # outer normalizer N^-eta


WEIGHT_NAMES = (*RECON_TERMS, "unified")


@dataclass(frozen=True)
class VariantParams:
    """One reconstruction variant: the λ of each §4 term, and optional per-variant overrides."""

    weights: dict[str, float]
    unified: UnifiedParams = field(default_factory=UnifiedParams)
    beta: float | None = None  # overrides cvae.common.beta for this variant
    free_bits: float | None = None  # overrides cvae.common.free_bits for this variant

    def validate(self, path: str) -> None:
        for name, value in self.weights.items():
            require(
                name in WEIGHT_NAMES,
                f"{path}.weights.{name}",
                f"unknown weight (known: {', '.join(WEIGHT_NAMES)})",
                name,
            )
            require(value >= 0, f"{path}.weights.{name}", "must be >= 0", value)
        require(
            any(v > 0 for v in self.weights.values()),
            f"{path}.weights",
            "needs at least one positive weight",
            self.weights,
        )
        if self.beta is not None:
            require(self.beta >= 0, f"{path}.beta", "must be >= 0", self.beta)
        if self.free_bits is not None:
            require(self.free_bits >= 0, f"{path}.free_bits", "must be >= 0", self.free_bits)


@dataclass(frozen=True)
class CommonCVAEParams:
    """Settings shared by every CVAE variant (SPEC §4, §5)."""

    latent_dim: int
    encoder_layers: int
    encoder_d_model: int
    encoder_heads: int
    prior: Literal["standard", "conditional"]
    freeze_decoder: Literal["none", "all", "embeddings"]
    lr: float
    batch_size: int
    steps: int
    beta: float
    beta_schedule: Literal["constant", "linear", "cyclical"]
    warmup_steps: int  # linear schedule: steps to reach beta
    n_cycles: int  # cyclical schedule: number of cycles over `steps`
    ramp_fraction: float  # cyclical schedule: share of each cycle spent ramping 0 -> beta
    free_bits: float  # nats per latent dimension (0 disables)
    bow_weight: float  # weight of the bag-of-words auxiliary loss (0 disables)
    eps: float  # nats guarding divisions by surprisal
    log_every: int  # steps between dvclive points
    device: Device
    threads: int

    def validate(self, path: str) -> None:
        for name in (
            "latent_dim",
            "encoder_layers",
            "encoder_d_model",
            "encoder_heads",
            "batch_size",
            "steps",
            "n_cycles",
            "log_every",
        ):
            value = getattr(self, name)
            require(value > 0, f"{path}.{name}", "must be > 0", value)
        require(
            self.encoder_d_model % self.encoder_heads == 0,
            f"{path}.encoder_heads",
            f"must divide encoder_d_model ({self.encoder_d_model})",
            self.encoder_heads,
        )
        require(self.lr > 0, f"{path}.lr", "must be > 0", self.lr)
        require(self.beta >= 0, f"{path}.beta", "must be >= 0", self.beta)
        require(self.warmup_steps >= 0, f"{path}.warmup_steps", "must be >= 0", self.warmup_steps)
        require(
            0.0 < self.ramp_fraction <= 1.0,
            f"{path}.ramp_fraction",
            "must be in (0, 1]",
            self.ramp_fraction,
        )
        require(self.free_bits >= 0, f"{path}.free_bits", "must be >= 0", self.free_bits)
        require(self.bow_weight >= 0, f"{path}.bow_weight", "must be >= 0", self.bow_weight)
        require(self.eps > 0, f"{path}.eps", "must be > 0", self.eps)
        require(self.threads >= 0, f"{path}.threads", "must be >= 0", self.threads)


@dataclass(frozen=True)
class CVAEParams:
    seeds: tuple[int, ...]  # every variant is trained once per seed
    common: CommonCVAEParams
    variants: dict[str, VariantParams]

    def validate(self, path: str) -> None:
        require(len(self.seeds) > 0, f"{path}.seeds", "needs at least one seed", list(self.seeds))
        require(
            len(set(self.seeds)) == len(self.seeds),
            f"{path}.seeds",
            "must not repeat a seed",
            list(self.seeds),
        )
        require(
            len(self.variants) > 0, f"{path}.variants", "needs at least one variant", self.variants
        )

    def variant(self, name: str) -> VariantParams:
        if name not in self.variants:
            raise ParamsError(
                f"cvae.variants.{name}: no such variant (known: {', '.join(self.variants)})"
            )
        return self.variants[name]


@dataclass(frozen=True)
class EvaluateParams:
    """Test-split evaluation of one trained CVAE (SPEC §7)."""

    posterior_samples: int  # S samples of z ~ q(z|x,y) averaged into L_post
    iw_samples: int  # K importance samples for log p̂_K(y|x)
    batch_size: int
    # a position "reveals the strategy" when the oracle's per-token information exceeds this
    reveal_min_nats: float
    probe_test_fraction: float
    seed: int
    device: Device
    threads: int

    def validate(self, path: str) -> None:
        for name in ("posterior_samples", "iw_samples", "batch_size"):
            value = getattr(self, name)
            require(value > 0, f"{path}.{name}", "must be > 0", value)
        require(
            self.reveal_min_nats >= 0,
            f"{path}.reveal_min_nats",
            "must be >= 0",
            self.reveal_min_nats,
        )
        require(
            0 < self.probe_test_fraction < 1,
            f"{path}.probe_test_fraction",
            "must be in (0, 1)",
            self.probe_test_fraction,
        )
        require(self.threads >= 0, f"{path}.threads", "must be >= 0", self.threads)


@dataclass(frozen=True)
class ReportParams:
    """Aggregation over seeds and the tables of `reports/`."""

    confidence: float  # level of the bootstrap confidence intervals over seeds
    n_resamples: int
    seed: int
    baseline_variant: str  # every variant is tested against this one (paired Wilcoxon)

    def validate(self, path: str) -> None:
        require(0 < self.confidence < 1, f"{path}.confidence", "must be in (0, 1)", self.confidence)
        require(self.n_resamples > 0, f"{path}.n_resamples", "must be > 0", self.n_resamples)


@dataclass(frozen=True)
class Params:
    paths: PathParams
    data: DataParams
    base: BaseParams
    surprisal: SurprisalParams
    cvae: CVAEParams
    evaluate: EvaluateParams
    report: ReportParams

    def validate(self, path: str) -> None:
        require(
            self.report.baseline_variant in self.cvae.variants,
            "report.baseline_variant",
            f"must name a variant in cvae.variants ({', '.join(self.cvae.variants)})",
            self.report.baseline_variant,
        )


def parse_params(raw: object) -> Params:
    """Validate a parsed params mapping; raises `ParamsError` naming the first bad key."""
    return load_dataclass(Params, raw)


def load_params(path: str | Path = PARAMS_FILE) -> Params:
    """Read and validate `params.yaml` (the one place stages get their configuration)."""
    path = Path(path)
    try:
        raw = yaml.safe_load(path.read_text())
    except yaml.YAMLError as err:
        raise ParamsError(f"{path}: not valid YAML ({err})") from err
    return parse_params(raw)
