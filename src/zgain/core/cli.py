"""What every stage's command line shares: run options and one-line user errors.

A params, data or provenance mistake is the user's to fix: the stage prints it (one line per
problem) and exits with status 2, without a traceback. Anything else is a bug and keeps its
traceback.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Annotated

import typer

from zgain.core.errors import USER_ERRORS

USER_ERROR_EXIT = 2

VariantOption = Annotated[
    str | None, typer.Option(help="a key of cvae.variants (omitted: the confirming group)")
]
BaseOption = Annotated[int, typer.Option(help="base seed (one of base.seeds)")]
RateOption = Annotated[float, typer.Option(help="target KL C in nats (one of cvae.rates)")]
SeedOption = Annotated[int, typer.Option(help="training seed (one of cvae.seeds)")]


def run_stage(main: Callable[..., object]) -> None:
    """typer.run(main), printing a user error as its message and exiting with status 2."""
    try:
        typer.run(main)
    except USER_ERRORS as err:
        for line in str(err).splitlines():
            print(f"error: {line}", file=sys.stderr)
        sys.exit(USER_ERROR_EXIT)
