"""What a report is about: the Setup's bullets (the world or pairs, the runs, the intervals,
the devices), the Findings' scope sentence, and a command that reruns the study on another
world (docs/usage.md)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd

from zgain.core.runs import rate_label
from zgain.params import DataParams, PairsParams, Params
from zgain.report.loading import DEVICE_COLUMN, EvalResults
from zgain.report.markdown import NOT_APPLICABLE, fmt, method_label, plural

ANOTHER_NOISE = 0.05  # the rerun example's noise when this world has none
OTHER_PRIOR = {"uniform": "x_dependent", "x_dependent": "uniform"}


def world_sentence(data: DataParams | PairsParams, n_test: float) -> str:
    """The world the findings hold on: the data block of params."""
    if isinstance(data, PairsParams):
        return (
            f"These findings hold on the pairs of `{data.file}`, split by "
            f"`{data.key_column or data.x_column}` (seed {data.seed}); N = {fmt(n_test, 0)} test "
            "examples."
        )
    knobs = f", a shared prefix of {data.prefix}" if data.prefix else ""
    if data.decoy_positions:
        slots = ", ".join(map(str, data.decoy_positions))
        knobs += f", decoy slots {slots} at noise {data.decoy_noise:g}"
    return (
        f"These findings hold on one synthetic world: K = {len(data.transforms)} strategies "
        f"({', '.join(data.transforms)}), `{data.prior}` prior (temperature "
        f"{data.prior_temperature:g}), noise {data.noise:g}{knobs}, V = {data.vocab_size}, x "
        f"length {data.length_min}–{data.length_max}, N = {fmt(n_test, 0)} test examples."
    )


def rerun_command(data: DataParams | PairsParams) -> str:
    """A `dvc exp run` that reruns the whole study on another world: one strategy fewer (when
    K > 2), twice the noise and the other prior; for pairs, another split of the same file."""
    if isinstance(data, PairsParams):
        return f"dvc exp run -S data.seed={data.seed + 1}"
    transforms = data.transforms[:-1] if len(data.transforms) > 2 else data.transforms
    noise = 2 * data.noise if data.noise > 0 else ANOTHER_NOISE
    return (
        f"dvc exp run -S 'data.transforms=[{','.join(transforms)}]' -S data.noise={noise:g} "
        f"-S data.prior={OTHER_PRIOR[data.prior]}"
    )


def headline_reason(oracle_info: float) -> str:
    """Why the headline rate is the headline (zgain.report.frontier.headline_rate)."""
    if math.isfinite(oracle_info):
        return f"the one nearest the oracle's mean I* = {fmt(oracle_info)}"
    return "the middle listed rate (no oracle I* to choose by)"


def data_line(data: DataParams | PairsParams, n_test: float) -> str:
    """The setup's first bullet: the world, or the pairs file, the examples were drawn from."""
    if isinstance(data, DataParams):
        return (
            f"World: K = {len(data.transforms)} strategies ({', '.join(data.transforms)}), "
            f"V = {data.vocab_size} content tokens, x length {data.length_min}–"
            f"{data.length_max}, noise ε = {data.noise}, `{data.prior}` prior; "
            f"N = {fmt(n_test, 0)} test examples."
        )
    oracle = (
        f"oracle columns `{data.oracle.nll}` (−log p(y|x)) and `{data.oracle.info}` (I*)"
        if data.oracle
        else "no oracle"
    )
    return (
        f"Data: the pairs file `{data.file}` (x `{data.x_column}`, y `{data.y_column}`, "
        f"tokenizer {' / '.join(dict.fromkeys(data.tokenizers))}), split by "
        f"`{data.key_column or data.x_column}`; {oracle}; N = {fmt(n_test, 0)} test examples."
    )


def one_base(params: Params) -> str:
    """What every interval and verdict is conditional on: the one base all runs start from."""
    return (
        f"Every run starts from one base (`base.seeds` = [{params.base.screening}]): the "
        "intervals and "
        "verdicts are over CVAE seeds given that base "
        "([why](../docs/usage.md#what-is-and-is-not-reproducible))."
    )


def header(
    params: Params, results: EvalResults, rates: Sequence[float]
) -> tuple[list[str], list[str]]:
    """The title lines, and the setup bullets (world, runs, intervals)."""
    data, confidence = params.data, params.report.confidence
    n_seeds = len(results.seeds)
    n_test = results.split_value("n_examples")
    n_runs = len(results.runs) * len(rates)
    if n_seeds == 1:
        intervals = (
            "One seed: every cell is that seed's value, with no interval (one seed has no "
            "spread, so nothing can be said about variation over seeds)."
        )
    else:
        intervals = (
            f"Cells over seeds: {method_label(n_seeds, confidence)}. The seeds are the "
            "replicates (each run's metric is a mean over its test examples); the interval is "
            f"mean ± t_{{{0.5 + confidence / 2:g}, n−1}} · s/√n over the n seed values (s their "
            "standard deviation), intersected with the metric's range where it has one "
            "(docs/method.md#bounded-intervals). `(n=k)`: only k seeds define the metric."
        )
    common = params.cvae.common
    if common.beta_schedule == "rate_target":
        training = (
            f"each run trained toward a target KL C by dual ascent on log β "
            f"(docs/method.md#rate-targeted-training); target rates C = "
            f"{', '.join(map(rate_label, rates))} nats; headline rate C = "
            f"{rate_label(results.rate)}, {headline_reason(results.split_value('oracle_info'))}"
        )
    else:
        training = f"fixed β = {common.beta} ({common.beta_schedule} schedule), no target rate"
    title = [
        "# zgain report",
        "",
        "Generated by `python -m stages.report` from the evaluation outputs; do not edit.",
        "",
    ]
    return title, [
        f"- {data_line(data, n_test)}",
        f"- Runs: {plural(len(results.variants), 'variant')} × {plural(len(rates), 'rate')} × "
        f"{plural(n_seeds, 'seed')} = {plural(n_runs, 'run')} "
        f"(variants: {', '.join(results.variants)}; seeds: {', '.join(map(str, results.seeds))}); "
        f"{training}.",
        f"- Intervals: {intervals}",
        "- Reference rows (`base`, `oracle`, `floor`, `ceiling`, `cap`, `even spread`) are fixed "
        "by the test split and the settings, the same in every run: no interval. n/a: undefined; "
        f"{NOT_APPLICABLE}: does not apply.",
    ]


def mixed_devices_lines(runs: pd.DataFrame) -> list[str]:
    """A Setup bullet naming each device kind's runs (`<variant>-<rate>-<seed>`, as the stages
    are named) when the runs come from several kinds; else none."""
    kinds = runs.groupby(DEVICE_COLUMN, sort=True)
    if kinds.ngroups < 2:
        return []
    parts = [
        f"{kind}: "
        + ", ".join(f"{r.variant}-{rate_label(r.rate)}-{r.seed}" for r in group.itertuples())
        for kind, group in kinds
    ]
    return [
        f"- Devices: the runs come from {kinds.ngroups} device kinds ({'; '.join(parts)}); "
        "rounding differs between kinds, so compare their numbers within the intervals, "
        "not digit by digit."
    ]


def additive_definitions(params: Params) -> str:
    """The additive variants (more than one weighted term) as sums of their terms."""
    parts = []
    for name, variant in params.cvae.variants.items():
        used = {t: w for t, w in variant.weights.items() if w}
        if len(used) > 1:
            terms = " + ".join(t if w == 1 else f"{w:g}·{t}" for t, w in used.items())
            parts.append(f"{name} = {terms}")
    if not parts:
        return ""
    return (
        f"*Additive (dashed in figures): {'; '.join(parts)} "
        "([terms](../docs/method.md#reconstruction-terms)).*"
    )
