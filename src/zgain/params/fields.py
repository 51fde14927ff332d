"""Field types of the params schema, each with its rule, and the frozen `Block` every block is.

A rule's failure reads `<rule>, got <value>`; `fail` builds the same line from a block validator.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, StrictFloat, StrictInt

VARIANT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")
"""A variant name becomes part of stage names, paths and commands: letters, digits, `_`, `-`."""


def rule(holds: Callable[[Any], bool], text: str) -> AfterValidator:
    """A field rule: `holds(value)` or the error `<text>, got <value>`."""

    def check(value: Any) -> Any:
        if not holds(value):
            raise ValueError(f"{text}, got {value!r}")
        return value

    return AfterValidator(check)


PositiveInt = Annotated[StrictInt, rule(lambda v: v > 0, "must be > 0")]
NonNegativeInt = Annotated[StrictInt, rule(lambda v: v >= 0, "must be >= 0")]
PositiveFloat = Annotated[StrictFloat, rule(lambda v: v > 0, "must be > 0")]
NonNegativeFloat = Annotated[StrictFloat, rule(lambda v: v >= 0, "must be >= 0")]
Probability = Annotated[StrictFloat, rule(lambda v: 0.0 <= v < 1.0, "must be in [0, 1)")]
OpenUnit = Annotated[StrictFloat, rule(lambda v: 0.0 < v < 1.0, "must be in (0, 1)")]
UnitInterval = Annotated[StrictFloat, rule(lambda v: 0.0 <= v <= 1.0, "must be in [0, 1]")]


class Block(BaseModel):
    """A params block: frozen, unknown keys rejected."""

    model_config = ConfigDict(extra="forbid", frozen=True)


def fail(path: str, text: str, value: object) -> ValueError:
    """A block validator's error, printed as `<path>: <text>, got <value>` with `path` relative
    to the block (zgain.params.messages)."""
    return ValueError(f"@{path}: {text}, got {value!r}")


def raise_all(errors: list[ValueError]) -> None:
    """Raise every problem a block validator found at once, one line each (none: return)."""
    if errors:
        raise ValueError("\n".join(str(e) for e in errors))


def written_as_decimal(value: Any) -> Any:
    # DVC names each run's files from the rate as written; 1 and 1.0 would name two paths.
    if isinstance(value, bool | int):
        raise ValueError(f"must be written as a decimal (1.0, not 1), got {value!r}")
    return value


Rate = Annotated[PositiveFloat, BeforeValidator(written_as_decimal)]
