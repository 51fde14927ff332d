"""The errors a user can cause, each printed by a stage as one line (see `zgain.core.cli`)."""

from __future__ import annotations


class ParamsError(ValueError):
    """`params.yaml` values that are unknown, mistyped or out of range; one line per problem.

    Each line reads `<key path>: <rule>, got <value>`.
    """

    def __init__(self, *lines: str) -> None:
        if not lines:
            raise ValueError("a ParamsError needs at least one message line")
        self.lines = tuple(lines)
        super().__init__("\n".join(lines))


class DataError(ValueError):
    """An input file that is missing, unreadable, or not what its consumer expects."""


class ProvenanceError(DataError):
    """Tables and a checkpoint that do not come from the same base model."""


class NonFiniteLossError(FloatingPointError):
    """A loss term became NaN or infinite; the message names the step and the term."""


USER_ERRORS: tuple[type[Exception], ...] = (ParamsError, DataError, NonFiniteLossError)
"""What a stage reports as a message and a non-zero exit, without a traceback."""
