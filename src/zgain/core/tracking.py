"""Training curves through dvclive."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
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
            # sync(), not next_step(): next_step also writes (with an fsync) the one signal
            # file of DVC's VS Code extension under .dvc/tmp, which the runs of a group,
            # trained side by side, would race to create and remove.
            live.sync()

        yield live, log


@contextmanager
def live_runs(directories: list[Path]) -> Iterator[tuple[list[Live], list[LogFn]]]:
    """`live_run` for each directory at once (the runs of one group), in the order given."""
    with ExitStack() as stack:
        opened = [stack.enter_context(live_run(directory)) for directory in directories]
        yield [live for live, _ in opened], [log for _, log in opened]
