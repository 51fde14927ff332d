"""The glossary: one entry per metric name the report shows, its formula and unit
(docs/method.md#evaluation-quantities). Every table column and every metric a caption or figure
names has an entry."""

from __future__ import annotations

import re

SYMBOLS = (
    "Per test example i: B_i = Σ_t b_{i,t}, the frozen base's code length; L_i = "
    "E_q[−log p_θ(y|x,z)], the decoder's code length with z ~ q(z|x,y); M_i = −log p̂_K(y|x), "
    "the CVAE's own code length for y given x with z marginalized (importance sampling from "
    "½q + ½p(z|x)); NLL*_i = −log p(y|x), the exact z-free code length; I*_i = "
    "KL(p(s|x,y) ‖ p(s|x)), the oracle's information about the strategy s; C*_i = NLL*_i − I*_i, "
    "the code length of a latent that knows s; T_i, the number of target tokens. Means are over "
    "the N test examples of one run; nats/seq = nats per sequence."
)

ENTRIES = """
gross_gain (nats/seq): G = mean_i (B_i − L_i): code-length reduction over the base with the
    posterior z
marginal_gain (nats/seq): G^marg = mean_i (B_i − M_i): the CVAE with z marginalized against the
    base; 0 at the entangled initialization
z_information (nats/seq): I^θ = mean_i (M_i − L_i): what the posterior z saves beyond the CVAE's
    own z-free code; gross = marginal + z-information; the true I^θ ≤ kl
capture (ratio): mean I^θ / mean I*: z-information as a share of the oracle's; NaN when mean I*
    = 0
kl (nats/seq): mean_i KL(q(z|x_i,y_i) ‖ p(z|x_i)), the rate paid for z
net_gain (nats/seq): mean_i (B_i − L_i − KL_i) = B + ELBO: the bits-back gain, gross − kl
oracle_gross_gain (nats/seq): mean_i (B_i − C*_i): the gross gain of a latent that knows s
oracle_marginal_gain (nats/seq): mean_i (B_i − NLL*_i): the exact z-free model against the base
oracle_info (nats/seq): I* = mean_i I*_i = mean_i (NLL*_i − C*_i): the z-information of a latent
    that knows s
frac_gain_pop (share): 1 − Σ_i L_i / Σ_i B_i: share of the base's code length removed, a ratio
    of sums
frac_gain_ex (share): mean_i (1 − L_i / B_i): the same share per example, averaged
frac_gain_pop_tok (share): 1 − Σ_i (L_i/T_i) / Σ_i (B_i/T_i): the share on token means
frac_z_information (share): Σ_i (M_i − L_i) / Σ_i B_i: z-information as a share of the base's
    code length
frac_gain_pop_ceiling (share): 1 − Σ_i C*_i / Σ_i B_i: frac_gain_pop of the oracle's C*
frac_gain_ex_ceiling (share): mean_i (1 − C*_i / B_i): frac_gain_ex of the oracle's C*
frac_gain_pop_tok_ceiling (share): 1 − Σ_i (C*_i/T_i) / Σ_i (B_i/T_i): frac_gain_pop_tok of the
    oracle's C*
frac_z_information_ceiling (share): Σ_i I*_i / Σ_i B_i: frac_z_information of the oracle
probe_accuracy (share): held-out accuracy of a standardized logistic-regression probe from [z,
    log p(s|x)] to s, one z ~ q per example
probe_accuracy_mean (share): probe_accuracy with E_q[z] in place of the sample z
probe_floor (share): the same probe on log p(s|x) alone: what x already tells about s
probe_ceiling (share): Bayes accuracy mean_i max_s p(s|x_i,y_i) on the probe's held-out examples
normalized_recovery (share): (probe_accuracy − probe_floor) / (probe_ceiling − probe_floor):
    share of the strategy information beyond x that z makes linearly readable; NaN when ceiling
    ≤ floor
normalized_recovery_mean (share): normalized_recovery of probe_accuracy_mean
kmeans_accuracy (share): KMeans with K clusters on z samples, accuracy under the best one-to-one
    cluster–strategy map
kmeans_accuracy_mean (share): kmeans_accuracy on E_q[z]
kmeans_nmi (share, 0 to 1): normalized mutual information between the KMeans clusters of z
    samples and s
kmeans_nmi_mean (share, 0 to 1): kmeans_nmi on E_q[z]
kmeans_accuracy_floor (share): share of the most frequent strategy: the accuracy of one cluster
kmeans_accuracy_ceiling (share): matched accuracy of the Bayes labels argmax_s p(s|x,y)
kmeans_nmi_ceiling (share, 0 to 1): NMI between the Bayes labels argmax_s p(s|x,y) and s
localization_share (share): Σ_{revealing (i,t)} i^θ_{i,t} / Σ_{(i,t)} i^θ_{i,t}, pooled over
    examples, revealing = i*_{i,t} > reveal_min_nats; not confined to [0, 1]
oracle_localization_share (share): localization_share of the oracle's i*_{i,t}
revealed_token_share (share): (number of revealing positions) / Σ_i T_i: the share an even
    spread would give
token_info_spearman (−1 to 1): Spearman rank correlation over all (i, t) positions between
    i^θ_{i,t} and i*_{i,t}
token_z_information (nats/token): i^θ_{i,t} = m_{i,t} − ℓ_{i,t}, m and ℓ the per-token code
    lengths that sum to M_i and L_i: the per-token z-information
oracle_token_info (nats/token): i*_{i,t}, the oracle's per-token information about s; Σ_t
    i*_{i,t} = I*_i
active_units (count): number of latent dimensions d with Var_i(E_q[z_d]) > 0.01
latent_dim (count): the dimension of z, cvae.common.model.latent_dim
mi_q_nats (nats): I_q((x,y); z) ≈ mean_i [log q(z_i|x_i,y_i) − log (1/N) Σ_j q(z_i|x_j,y_j)],
    one z_i ~ q per example; each term ≤ log N
mi_q_cap_nats (nats): log N, the largest value mi_q_nats can take
z_reliance (nats/seq): mean_i (L^shuf_i − L_i), L^shuf with another example's z: how much a
    wrong z hurts; unbounded, not a gain
prior_sample_gain (nats/seq): mean_i (B_i − L^prior_i), L^prior with z ~ p(z|x)
val_z_information (nats/seq): I^θ during training, on the first cvae.common.val_examples
    validation examples with cvae.common.val_iw_samples importance samples, every
    cvae.common.val_every steps
z_information_se (nats/seq): sd_i(M_i − L_i) / √N: standard error of one run's z_information
    over its test examples
iw_samples (count): K, importance samples of ½q + ½p(z|x) behind M_i
"""
"""`name (unit): definition`, one entry per line; an indented line continues the entry above."""


def parse_entries(text: str) -> dict[str, tuple[str, str]]:
    """Metric name -> (definition with its formula, unit), in the order of `text`."""
    joined: list[str] = []
    for line in text.strip().splitlines():
        if line.startswith(" "):
            joined[-1] += " " + line.strip()
        else:
            joined.append(line)
    found = (re.fullmatch(r"(\w+) \(([^)]*)\): (.*)", entry) for entry in joined)
    return {m[1]: (m[3], m[2]) for m in found if m}


GLOSSARY = parse_entries(ENTRIES)


def glossary_lines(names: list[str]) -> list[str]:
    """One Markdown bullet per name, in the given order; KeyError names an undefined metric."""
    missing = [name for name in names if name not in GLOSSARY]
    if missing:
        raise KeyError(f"metrics {missing} have no glossary entry")
    return [f"- `{name}`: {GLOSSARY[name][0]} ({GLOSSARY[name][1]})" for name in names]
