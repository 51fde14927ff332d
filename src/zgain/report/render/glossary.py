"""The glossary: one entry per metric name the report shows, its formula, unit and the section
of docs/method.md that defines it, each read from its MetricSpec (zgain.results.metrics). Every
table column and every metric a caption or figure names has an entry."""

from __future__ import annotations

from zgain.results.metrics import METRICS

SYMBOLS = (
    "Per test example i: B_i = Σ_t b_{i,t}, the frozen base's code length; L_i = "
    "E_q[−log p_θ(y|x,z)], the decoder's code length with z ~ q(z|x,y); M_i = −log p̂_K(y|x), "
    "the CVAE's own code length for y given x with z marginalized (importance sampling from "
    "½q + ½p(z|x)); NLL*_i = −log p(y|x), the exact z-free code length; I*_i = "
    "KL(p(s|x,y) ‖ p(s|x)), the oracle's information about the strategy s; C*_i = NLL*_i − I*_i, "
    "the code length of a latent that knows s; T_i, the number of target tokens. Means are over "
    "the N test examples of one run; nats/seq = nats per sequence."
)

GLOSSARY: dict[str, tuple[str, str]] = {
    key: (spec.definition, spec.unit) for key, spec in METRICS.items()
}
"""Metric name -> (definition with its formula, unit), from each MetricSpec, in their order."""


def glossary_lines(names: list[str]) -> list[str]:
    """One Markdown bullet per name, in the given order; KeyError names an undefined metric."""
    missing = [name for name in names if name not in GLOSSARY]
    if missing:
        raise KeyError(f"metrics {missing} have no glossary entry")
    return [
        f"- `{name}`: {METRICS[name].definition} ({METRICS[name].unit}; {METRICS[name].formula})"
        for name in names
    ]
