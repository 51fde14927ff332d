"""One line per metric name the report shows: formula and unit.

docs/method.md#evaluation-quantities. Symbols, per test example i: B_i = Σ_t b_{i,t} the frozen
base's code length; L_i the decoder's code length with z ~ q(z|x,y); M_i = −log p̂_K(y|x) the
CVAE's own code length with z marginalized; NLL*_i = −log p(y|x) the exact z-free code length;
I*_i the oracle's information about the strategy s; C*_i = NLL*_i − I*_i; T_i the target
length. Every table column and every metric a caption names has an entry here.
"""

from __future__ import annotations

SYMBOLS = (
    "Per test example i: B_i = Σ_t b_{i,t}, the frozen base's code length; L_i = "
    "E_q[−log p_θ(y|x,z)], the decoder's code length with z ~ q(z|x,y); M_i = −log p̂_K(y|x), "
    "the CVAE's own code length for y given x with z marginalized (importance sampling from "
    "½q + ½p(z|x)); NLL*_i = −log p(y|x), the exact z-free code length; I*_i = "
    "KL(p(s|x,y) ‖ p(s|x)), the oracle's information about the strategy s; C*_i = NLL*_i − I*_i, "
    "the code length of a latent that knows s; T_i, the number of target tokens. Means are over "
    "the N test examples of one run; nats/seq = nats per sequence."
)

NATS_SEQ, SHARE, COUNT = "nats/seq", "share", "count"

GLOSSARY: dict[str, tuple[str, str]] = {
    "gross_gain": (
        "G = mean_i (B_i − L_i): code-length reduction over the base with the posterior z",
        NATS_SEQ,
    ),
    "marginal_gain": (
        (
            "G^marg = mean_i (B_i − M_i): the CVAE with z marginalized against the base; 0 at the "
            "entangled initialization"
        ),
        NATS_SEQ,
    ),
    "z_information": (
        (
            "I^θ = mean_i (M_i − L_i): what the posterior z saves beyond the CVAE's own z-free "
            "code; gross = marginal + z-information; the true I^θ ≤ kl"
        ),
        NATS_SEQ,
    ),
    "capture": (
        "mean I^θ / mean I*: z-information as a share of the oracle's; NaN when mean I* = 0",
        "ratio",
    ),
    "kl": (
        "mean_i KL(q(z|x_i,y_i) ‖ p(z|x_i)), the rate paid for z",
        NATS_SEQ,
    ),
    "net_gain": (
        "mean_i (B_i − L_i − KL_i) = B + ELBO: the bits-back gain, gross − kl",
        NATS_SEQ,
    ),
    "oracle_gross_gain": (
        "mean_i (B_i − C*_i): the gross gain of a latent that knows s",
        NATS_SEQ,
    ),
    "oracle_marginal_gain": (
        "mean_i (B_i − NLL*_i): the exact z-free model against the base",
        NATS_SEQ,
    ),
    "oracle_info": (
        "I* = mean_i I*_i = mean_i (NLL*_i − C*_i): the z-information of a latent that knows s",
        NATS_SEQ,
    ),
    "frac_gain_pop": (
        "1 − Σ_i L_i / Σ_i B_i: share of the base's code length removed, a ratio of sums",
        SHARE,
    ),
    "frac_gain_ex": (
        "mean_i (1 − L_i / B_i): the same share per example, averaged",
        SHARE,
    ),
    "frac_gain_pop_tok": (
        "1 − Σ_i (L_i/T_i) / Σ_i (B_i/T_i): the share on token means",
        SHARE,
    ),
    "frac_z_information": (
        "Σ_i (M_i − L_i) / Σ_i B_i: z-information as a share of the base's code length",
        SHARE,
    ),
    "frac_gain_pop_ceiling": (
        "1 − Σ_i C*_i / Σ_i B_i: frac_gain_pop of the oracle's C*",
        SHARE,
    ),
    "frac_gain_ex_ceiling": (
        "mean_i (1 − C*_i / B_i): frac_gain_ex of the oracle's C*",
        SHARE,
    ),
    "frac_gain_pop_tok_ceiling": (
        "1 − Σ_i (C*_i/T_i) / Σ_i (B_i/T_i): frac_gain_pop_tok of the oracle's C*",
        SHARE,
    ),
    "frac_z_information_ceiling": (
        "Σ_i I*_i / Σ_i B_i: frac_z_information of the oracle",
        SHARE,
    ),
    "probe_accuracy": (
        (
            "held-out accuracy of a standardized logistic-regression probe from [z, log p(s|x)] to "
            "s, one z ~ q per example"
        ),
        SHARE,
    ),
    "probe_accuracy_mean": (
        "probe_accuracy with E_q[z] in place of the sample z",
        SHARE,
    ),
    "probe_floor": (
        "the same probe on log p(s|x) alone: what x already tells about s",
        SHARE,
    ),
    "probe_ceiling": (
        "Bayes accuracy mean_i max_s p(s|x_i,y_i) on the probe's held-out examples",
        SHARE,
    ),
    "normalized_recovery": (
        (
            "(probe_accuracy − probe_floor) / (probe_ceiling − probe_floor): share of the strategy "
            "information beyond x that z makes linearly readable; NaN when ceiling ≤ floor"
        ),
        SHARE,
    ),
    "normalized_recovery_mean": (
        "normalized_recovery of probe_accuracy_mean",
        SHARE,
    ),
    "kmeans_accuracy": (
        (
            "KMeans with K clusters on z samples, accuracy under the best one-to-one "
            "cluster–strategy map"
        ),
        SHARE,
    ),
    "kmeans_accuracy_mean": (
        "kmeans_accuracy on E_q[z]",
        SHARE,
    ),
    "kmeans_nmi": (
        "normalized mutual information between the KMeans clusters of z samples and s",
        "share, 0 to 1",
    ),
    "kmeans_nmi_mean": (
        "kmeans_nmi on E_q[z]",
        "share, 0 to 1",
    ),
    "kmeans_accuracy_floor": (
        "share of the most frequent strategy: the accuracy of one cluster",
        SHARE,
    ),
    "kmeans_accuracy_ceiling": (
        "matched accuracy of the Bayes labels argmax_s p(s|x,y)",
        SHARE,
    ),
    "kmeans_nmi_ceiling": (
        "NMI between the Bayes labels argmax_s p(s|x,y) and s",
        "share, 0 to 1",
    ),
    "localization_share": (
        (
            "Σ_{revealing (i,t)} i^θ_{i,t} / Σ_{(i,t)} i^θ_{i,t}, pooled over examples, revealing ="
            " i*_{i,t} > reveal_min_nats; not confined to [0, 1]"
        ),
        SHARE,
    ),
    "oracle_localization_share": (
        "localization_share of the oracle's i*_{i,t}",
        SHARE,
    ),
    "revealed_token_share": (
        "(number of revealing positions) / Σ_i T_i: the share an even spread would give",
        SHARE,
    ),
    "token_info_spearman": (
        "Spearman rank correlation over all (i, t) positions between i^θ_{i,t} and i*_{i,t}",
        "−1 to 1",
    ),
    "token_z_information": (
        (
            "i^θ_{i,t} = m_{i,t} − ℓ_{i,t}, m and ℓ the per-token code lengths that sum to M_i "
            "and L_i: the per-token z-information"
        ),
        "nats/token",
    ),
    "oracle_token_info": (
        "i*_{i,t}, the oracle's per-token information about s; Σ_t i*_{i,t} = I*_i",
        "nats/token",
    ),
    "active_units": (
        "number of latent dimensions d with Var_i(E_q[z_d]) > 0.01",
        COUNT,
    ),
    "latent_dim": (
        "the dimension of z, cvae.common.model.latent_dim",
        COUNT,
    ),
    "mi_q_nats": (
        (
            "I_q((x,y); z) ≈ mean_i [log q(z_i|x_i,y_i) − log (1/N) Σ_j q(z_i|x_j,y_j)], one z_i ~ "
            "q per example; each term ≤ log N"
        ),
        "nats",
    ),
    "mi_q_cap_nats": (
        "log N, the largest value mi_q_nats can take",
        "nats",
    ),
    "z_reliance": (
        (
            "mean_i (L^shuf_i − L_i), L^shuf with another example's z: how much a wrong z hurts; "
            "unbounded, not a gain"
        ),
        NATS_SEQ,
    ),
    "prior_sample_gain": (
        "mean_i (B_i − L^prior_i), L^prior with z ~ p(z|x)",
        NATS_SEQ,
    ),
    "val_z_information": (
        (
            "I^θ during training, on the first cvae.common.val_examples validation examples "
            "with cvae.common.val_iw_samples importance samples, every cvae.common.val_every steps"
        ),
        NATS_SEQ,
    ),
    "z_information_se": (
        "sd_i(M_i − L_i) / √N: standard error of one run's z_information over its test examples",
        NATS_SEQ,
    ),
    "iw_samples": (
        "K, importance samples of ½q + ½p(z|x) behind M_i",
        COUNT,
    ),
}
"""Metric name -> (definition with its formula, unit)."""


def glossary_lines(names: list[str]) -> list[str]:
    """One Markdown bullet per name, in the given order; KeyError names an undefined metric."""
    missing = [name for name in names if name not in GLOSSARY]
    if missing:
        raise KeyError(f"metrics {missing} have no glossary entry")
    return [f"- `{name}`: {GLOSSARY[name][0]} ({GLOSSARY[name][1]})" for name in names]
