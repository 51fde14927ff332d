"""The world a report's findings hold on, and a command that reruns the study on another.

Two strings from the data block of params (docs/usage.md): the Findings' scope sentence and the
Setup's `dvc exp run` line.
"""

from __future__ import annotations

from zgain.params import DataParams, PairsParams
from zgain.report.markdown import fmt

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
