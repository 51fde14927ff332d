"""The typed schema of `params.yaml` (pydantic v2) and its one loader.

Stages call `load_params()` once at their boundary; below it, code takes these frozen models or
plain values. Every block forbids unknown keys, every field is strictly typed and range-checked,
and all problems are reported at once, one line each: `data.noise: must be in [0, 1), got 1.5`.
The architecture blocks (`base.model`, `cvae.common.model`) *are* the model configs.

The package: field types with their rules (`fields`), the `data` block of either source
(`data`), the blocks of the stages before the CVAE (`upstream`), the others and `Params`
(`blocks`), and the error lines (`messages`, imported only when validation fails). It depends on
pydantic and the world's transform names only, so that every stage can read it without depending
on the code of another stage. Names that belong to a later stage's registry (the reconstruction
terms) are checked by that stage (`zgain.cvae.objective`).
"""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError
from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from zgain.core.errors import ParamsError
from zgain.params.blocks import ConfirmParams, CVAEParams, EvaluateParams, Params
from zgain.params.data import DATA_SOURCES, DataParams, PairsOracle, PairsParams
from zgain.params.fields import VARIANT_NAME
from zgain.params.report import EquivalenceParams, ReportParams
from zgain.params.training import (
    AggressiveParams,
    BetaScheduleName,
    CommonCVAEParams,
    CVAEConfig,
    RateRule,
    RateTargetParams,
    ResolvedVariant,
    UnifiedParams,
    VariantParams,
)
from zgain.params.upstream import (
    BaseParams,
    BasePaths,
    PathParams,
    SurprisalParams,
    TransformerConfig,
)

__all__ = [
    "DATA_SOURCES",
    "PARAMS_FILE",
    "VARIANT_NAME",
    "AggressiveParams",
    "BaseParams",
    "BasePaths",
    "ConfirmParams",
    "BetaScheduleName",
    "RateRule",
    "CVAEConfig",
    "CVAEParams",
    "CommonCVAEParams",
    "DataParams",
    "EquivalenceParams",
    "EvaluateParams",
    "PairsOracle",
    "PairsParams",
    "Params",
    "PathParams",
    "RateTargetParams",
    "ReportParams",
    "ResolvedVariant",
    "SurprisalParams",
    "TransformerConfig",
    "UnifiedParams",
    "VariantParams",
    "load_params",
    "parse_params",
    "read_yaml",
]

PARAMS_FILE = "params.yaml"


def parse_params(raw: object) -> Params:
    """Validate a parsed params mapping; `ParamsError` lists every problem, one line each."""
    try:
        return Params.model_validate(raw)
    except ValidationError as err:
        from zgain.params.messages import lines  # the error path only (see the docstring)

        raise ParamsError(*lines(err.errors())) from None


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
