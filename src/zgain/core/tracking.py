"""Training curves through dvclive."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from dvclive import Live

LogFn = Callable[[int, dict[str, float]], None]


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
