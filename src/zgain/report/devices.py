"""Which kind of device evaluated each run, and the report's note when the runs mix kinds.

Float rounding differs between device kinds (cpu, cuda, mps), so runs from different kinds
agree within the intervals over seeds, not digit by digit (docs/method.md#uncertainty-over-seeds).
The kind is read from the `environment` entry the evaluate stage writes beside a run's metrics;
`zgain shard` and queue workers train and evaluate a run on the same worker.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from zgain.core.io import read_json
from zgain.core.runs import rate_label
from zgain.evaluate.schema import ENVIRONMENT_KEY

DEVICE_COLUMN = "device_kind"
UNRECORDED = "unrecorded"


def device_kind(metrics_path: Path) -> str:
    """`cpu`, `cuda` or `mps` (the device type, without its index) of one run's metrics.json."""
    environment = read_json(metrics_path).get(ENVIRONMENT_KEY) or {}
    return str(environment.get("device", UNRECORDED)).partition(":")[0]


def run_label(run: object) -> str:
    """`<variant>-<rate>-<seed>` as the stage names it (`<variant>-<seed>` without a rate)."""
    rate = getattr(run, "rate", None)
    middle = "" if rate is None else f"{rate_label(rate)}-"
    return f"{run.variant}-{middle}{run.seed}"


def mixed_devices_lines(runs: pd.DataFrame) -> list[str]:
    """One header line naming each kind's runs when the runs come from several kinds; else none.

    runs: one row per run with `variant`, `seed`, optionally `rate`, and DEVICE_COLUMN.
    """
    kinds = runs.groupby(DEVICE_COLUMN, sort=True)
    if kinds.ngroups < 2:
        return []
    parts = [
        f"{kind}: " + ", ".join(run_label(r) for r in group.itertuples()) for kind, group in kinds
    ]
    return [
        f"- Devices: the runs come from {kinds.ngroups} device kinds ({'; '.join(parts)}); "
        "rounding differs between kinds, so compare their numbers within the intervals, "
        "not digit by digit."
    ]
