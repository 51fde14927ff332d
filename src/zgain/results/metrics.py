"""One MetricSpec per metric the evaluate stage writes or the report shows: its key, unit,
glossary line, symbol, range, axis label and the section of docs/method.md that defines it. The
glossary, the bounds on intervals, the tables' headers and the figures' axes all read these;
tests/report/test_metric_specs.py holds them equal to the evaluation schema's keys
(zgain.evaluate.schema)."""

from __future__ import annotations

import math
from dataclasses import dataclass

UNIT = (0.0, 1.0)
NON_NEGATIVE = (0.0, math.inf)
UNBOUNDED = (-math.inf, math.inf)
LATENT_DIM_BOUND = "latent_dim"  # active_units lies in [0, latent_dim]
METHOD = "docs/method.md"


@dataclass(frozen=True)
class MetricSpec:
    """A metric's facts. `bounds`: the range of the quantity itself (LATENT_DIM_BOUND for the
    latent size); `symbol`: the label prose and headers use (None: the key); `axis`: its axis
    label with unit where a figure plots it; `section`: its anchor in docs/method.md."""

    key: str
    unit: str
    definition: str
    symbol: str | None = None
    bounds: tuple[float, float | str] = UNBOUNDED
    axis: str | None = None
    section: str = "evaluation-quantities"

    @property
    def label(self) -> str:
        return self.symbol or self.key

    @property
    def formula(self) -> str:
        """Where its formula is written: METHOD at the anchor `section`."""
        return f"{METHOD}#{self.section}"


SPECS: tuple[MetricSpec, ...] = (
    MetricSpec(
        "gross_gain",
        "nats/seq",
        "G = mean_i (B_i − L_i): code-length reduction over the base with the posterior z",
        symbol="G",
        section="the-decomposition",
    ),
    MetricSpec(
        "marginal_gain",
        "nats/seq",
        "G^marg = mean_i (B_i − M_i): the CVAE with z marginalized against the base; 0 at the "
        "entangled initialization",
        symbol="G^marg",
        axis="marginal gain G^marg (nats/seq)",
        section="the-decomposition",
    ),
    MetricSpec(
        "z_information",
        "nats/seq",
        "I^θ = mean_i (M_i − L_i): what the posterior z saves beyond the CVAE's own z-free code; "
        "gross = marginal + z-information; the true I^θ ≤ kl",
        symbol="I^θ",
        axis="z-information I^θ (nats/seq)",
        section="the-decomposition",
    ),
    MetricSpec(
        "capture",
        "ratio",
        "mean I^θ / mean I*: z-information as a share of the oracle's; NaN when mean I* = 0",
        symbol="capture",
        axis="capture I^θ / I*",
        section="the-decomposition",
    ),
    MetricSpec(
        "kl",
        "nats/seq",
        "mean_i KL(q(z|x_i,y_i) ‖ p(z|x_i)), the rate paid for z",
        bounds=NON_NEGATIVE,
        section="the-decomposition",
    ),
    MetricSpec(
        "net_gain",
        "nats/seq",
        "mean_i (B_i − L_i − KL_i) = B + ELBO: the bits-back gain, gross − kl",
        section="the-decomposition",
    ),
    MetricSpec(
        "oracle_gross_gain",
        "nats/seq",
        "mean_i (B_i − C*_i): the gross gain of a latent that knows s",
        section="the-decomposition",
    ),
    MetricSpec(
        "oracle_marginal_gain",
        "nats/seq",
        "mean_i (B_i − NLL*_i): the exact z-free model against the base",
        section="the-decomposition",
    ),
    MetricSpec(
        "oracle_info",
        "nats/seq",
        "I* = mean_i I*_i = mean_i (NLL*_i − C*_i): the z-information of a latent that knows s",
        section="the-decomposition",
    ),
    MetricSpec(
        "frac_gain_pop",
        "share",
        "1 − Σ_i L_i / Σ_i B_i: share of the base's code length removed, a ratio of sums",
        section="the-decomposition",
    ),
    MetricSpec(
        "frac_gain_ex",
        "share",
        "mean_i (1 − L_i / B_i): the same share per example, averaged",
        section="the-decomposition",
    ),
    MetricSpec(
        "frac_gain_pop_tok",
        "share",
        "1 − Σ_i (L_i/T_i) / Σ_i (B_i/T_i): the share on token means",
        section="the-decomposition",
    ),
    MetricSpec(
        "frac_z_information",
        "share",
        "Σ_i (M_i − L_i) / Σ_i B_i: z-information as a share of the base's code length",
        section="the-decomposition",
    ),
    MetricSpec(
        "frac_gain_pop_ceiling",
        "share",
        "1 − Σ_i C*_i / Σ_i B_i: frac_gain_pop of the oracle's C*",
        section="the-decomposition",
    ),
    MetricSpec(
        "frac_gain_ex_ceiling",
        "share",
        "mean_i (1 − C*_i / B_i): frac_gain_ex of the oracle's C*",
        section="the-decomposition",
    ),
    MetricSpec(
        "frac_gain_pop_tok_ceiling",
        "share",
        "1 − Σ_i (C*_i/T_i) / Σ_i (B_i/T_i): frac_gain_pop_tok of the oracle's C*",
        section="the-decomposition",
    ),
    MetricSpec(
        "frac_z_information_ceiling",
        "share",
        "Σ_i I*_i / Σ_i B_i: frac_z_information of the oracle",
        section="the-decomposition",
    ),
    MetricSpec(
        "probe_accuracy",
        "share",
        "held-out accuracy of a standardized logistic-regression probe from [z, log p(s|x)] to s, "
        "one z ~ q per example",
        bounds=UNIT,
        axis="probe accuracy (strategy from z)",
        section="strategy-recovery-beyond-x",
    ),
    MetricSpec(
        "probe_accuracy_mean",
        "share",
        "probe_accuracy with E_q[z] in place of the sample z",
        bounds=UNIT,
        section="strategy-recovery-beyond-x",
    ),
    MetricSpec(
        "probe_floor",
        "share",
        "the same probe on log p(s|x) alone: what x already tells about s",
        section="strategy-recovery-beyond-x",
    ),
    MetricSpec(
        "probe_ceiling",
        "share",
        "Bayes accuracy mean_i max_s p(s|x_i,y_i) on the probe's held-out examples",
        section="strategy-recovery-beyond-x",
    ),
    MetricSpec(
        "normalized_recovery",
        "share",
        "(probe_accuracy − probe_floor) / (probe_ceiling − probe_floor): share of the strategy "
        "information beyond x that z makes linearly readable; NaN when ceiling ≤ floor",
        section="strategy-recovery-beyond-x",
    ),
    MetricSpec(
        "normalized_recovery_mean",
        "share",
        "normalized_recovery of probe_accuracy_mean",
        section="strategy-recovery-beyond-x",
    ),
    MetricSpec(
        "kmeans_accuracy",
        "share",
        "KMeans with K clusters on z samples, accuracy under the best one-to-one cluster–strategy "
        "map",
        bounds=UNIT,
        section="strategy-recovery-beyond-x",
    ),
    MetricSpec(
        "kmeans_accuracy_mean",
        "share",
        "kmeans_accuracy on E_q[z]",
        bounds=UNIT,
        section="strategy-recovery-beyond-x",
    ),
    MetricSpec(
        "kmeans_nmi",
        "share, 0 to 1",
        "normalized mutual information between the KMeans clusters of z samples and s",
        bounds=UNIT,
        section="strategy-recovery-beyond-x",
    ),
    MetricSpec(
        "kmeans_nmi_mean",
        "share, 0 to 1",
        "kmeans_nmi on E_q[z]",
        bounds=UNIT,
        section="strategy-recovery-beyond-x",
    ),
    MetricSpec(
        "kmeans_accuracy_floor",
        "share",
        "share of the most frequent strategy: the accuracy of one cluster",
        section="strategy-recovery-beyond-x",
    ),
    MetricSpec(
        "kmeans_accuracy_ceiling",
        "share",
        "matched accuracy of the Bayes labels argmax_s p(s|x,y)",
        section="strategy-recovery-beyond-x",
    ),
    MetricSpec(
        "kmeans_nmi_ceiling",
        "share, 0 to 1",
        "NMI between the Bayes labels argmax_s p(s|x,y) and s",
        section="strategy-recovery-beyond-x",
    ),
    MetricSpec(
        "localization_share",
        "share",
        "Σ_{revealing (i,t)} i^θ_{i,t} / Σ_{(i,t)} i^θ_{i,t}, pooled over examples, revealing = "
        "i*_{i,t} > reveal_min_nats; not confined to [0, 1]",
    ),
    MetricSpec(
        "oracle_localization_share",
        "share",
        "localization_share of the oracle's i*_{i,t}",
    ),
    MetricSpec(
        "revealed_token_share",
        "share",
        "(number of revealing positions) / Σ_i T_i: the share an even spread would give",
        bounds=UNIT,
    ),
    MetricSpec(
        "token_info_spearman",
        "−1 to 1",
        "Spearman rank correlation over all (i, t) positions between i^θ_{i,t} and i*_{i,t}",
    ),
    MetricSpec(
        "token_z_information",
        "nats/token",
        "i^θ_{i,t} = m_{i,t} − ℓ_{i,t}, m and ℓ the per-token code lengths that sum to M_i and "
        "L_i: the per-token z-information",
    ),
    MetricSpec(
        "oracle_token_info",
        "nats/token",
        "i*_{i,t}, the oracle's per-token information about s; Σ_t i*_{i,t} = I*_i",
    ),
    MetricSpec(
        "active_units",
        "count",
        "number of latent dimensions d with Var_i(E_q[z_d]) > 0.01",
        bounds=(0.0, LATENT_DIM_BOUND),
    ),
    MetricSpec(
        "latent_dim",
        "count",
        "the dimension of z, cvae.common.model.latent_dim",
    ),
    MetricSpec(
        "mi_q_nats",
        "nats",
        "I_q((x,y); z) ≈ mean_i [log q(z_i|x_i,y_i) − log (1/N) Σ_j q(z_i|x_j,y_j)], one z_i ~ q "
        "per example; each term ≤ log N",
        bounds=NON_NEGATIVE,
    ),
    MetricSpec(
        "mi_q_cap_nats",
        "nats",
        "log N, the largest value mi_q_nats can take",
        bounds=NON_NEGATIVE,
    ),
    MetricSpec(
        "z_reliance",
        "nats/seq",
        "mean_i (L^shuf_i − L_i), L^shuf with another example's z: how much a wrong z hurts; "
        "unbounded, not a gain",
    ),
    MetricSpec(
        "prior_sample_gain",
        "nats/seq",
        "mean_i (B_i − L^prior_i), L^prior with z ~ p(z|x)",
    ),
    MetricSpec(
        "val_z_information",
        "nats/seq",
        "I^θ during training, on the first cvae.common.val_examples validation examples with "
        "cvae.common.val_iw_samples importance samples, every cvae.common.val_every steps",
        section="during-training",
    ),
    MetricSpec(
        "z_information_se",
        "nats/seq",
        "sd_i(M_i − L_i) / √N: standard error of one run's z_information over its test examples",
        bounds=NON_NEGATIVE,
    ),
    MetricSpec(
        "iw_samples",
        "count",
        "K, importance samples of ½q + ½p(z|x) behind M_i",
    ),
    MetricSpec("base_nll", "nats/seq", "mean_i B_i: the frozen base's code length"),
    MetricSpec(
        "posterior_nll", "nats/seq", "mean_i L_i: the decoder's code length with the posterior z"
    ),
    MetricSpec(
        "marginal_nll", "nats/seq", "mean_i M_i: the CVAE's code length with z marginalized"
    ),
    MetricSpec("oracle_nll", "nats/seq", "mean_i NLL*_i: the exact z-free code length"),
    MetricSpec("n_examples", "count", "N, the test examples of one run"),
    MetricSpec(
        "kl_ema",
        "nats/seq",
        "the rate controller's moving average of the training batches' kl",
        bounds=NON_NEGATIVE,
        section="rate-targeted-training",
    ),
)

METRICS: dict[str, MetricSpec] = {spec.key: spec for spec in SPECS}
"""key -> spec, in glossary order."""
FRONTIER_PANELS = ("z_information", "capture", "marginal_gain", "probe_accuracy")
"""The frontier figure's panels, in order (each a metric with an axis label)."""


def spec(key: str) -> MetricSpec:
    """The spec of `key`; KeyError names a metric without one."""
    try:
        return METRICS[key]
    except KeyError:
        raise KeyError(f"metric {key!r} has no MetricSpec (zgain.results.metrics)") from None


def label(key: str) -> str:
    """The symbol of `key` (the key itself for a metric without one, or not specified)."""
    found = METRICS.get(key)
    return found.label if found else key
