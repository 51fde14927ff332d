"""Training curves through dvclive, and the options every per-run stage takes."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer

from dvclive import Live

LogFn = Callable[[int, dict[str, float]], None]
VariantOption = Annotated[str, typer.Option(help="a key of cvae.variants")]
SeedOption = Annotated[int, typer.Option(help="training seed (one of cvae.seeds)")]


@contextmanager
def live_run(directory: str | Path) -> Iterator[tuple[Live, LogFn]]:
    """A dvclive run whose plots `dvc.yaml` declares itself, and a `log(step, metrics)` for it."""
    with Live(str(directory), dvcyaml=False, save_dvc_exp=False) as live:

        def log(step: int, metrics: dict[str, float]) -> None:
            live.step = step
            for name, value in metrics.items():
                live.log_metric(name, value)
            live.next_step()

        yield live, log
