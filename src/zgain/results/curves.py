"""Learning curves across runs for `dvc plots show`: one quantity of every run at a rate as one
long table (`step`, `series` = `<variant>/seed<s>`, the quantity), from dvclive's
`<live_dir>/<variant>/rate<C>/seed<s>/plots/metrics/<quantity>.tsv`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from zgain.core.errors import DataError
from zgain.core.runs import Run, Tier
from zgain.params import Params

CURVE_QUANTITIES = ("kl", "beta", "recon", "val_z_information")
"""The quantities joined across runs (KL, β, the weighted reconstruction, validation I^θ)."""


def curve_path(live_dir: str | Path, run: Run, quantity: str) -> Path:
    """Where dvclive writes one run's curve of `quantity`."""
    return run.live_dir(live_dir) / "plots" / "metrics" / f"{quantity}.tsv"


def read_curve(path: Path, quantity: str) -> pd.Series:
    """One run's logged values of `quantity`, indexed by step."""
    if not path.is_file():
        raise DataError(f"{path}: training curve not found (rerun the run's train_cvae stage)")
    try:
        frame = pd.read_csv(path, sep="\t")
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as err:
        raise DataError(f"{path}: not a dvclive curve ({err})") from err
    if list(frame.columns) != ["step", quantity]:
        raise DataError(
            f"{path}: expected columns ['step', {quantity!r}], got {list(frame.columns)}"
        )
    return frame.set_index("step")[quantity]


def joined(live_dir: str | Path, runs: Mapping[str, Run], quantity: str) -> pd.DataFrame:
    """(step, series, quantity) rows of each run's curve, `series` its key in `runs`."""
    frames = [
        read_curve(curve_path(live_dir, run, quantity), quantity).reset_index().assign(series=name)
        for name, run in runs.items()
    ]
    return pd.concat(frames, ignore_index=True)[["step", "series", quantity]]


def learning_curves(
    live_dir: str | Path,
    variants: Sequence[str],
    rate: float,
    seeds: Sequence[int],
    quantity: str,
    base: int,
) -> pd.DataFrame:
    """(step, series, quantity) rows of one quantity over every listed screening run on `base`
    at `rate`."""
    runs = {f"{v}/seed{s}": Run(v, rate, s, base) for v in variants for s in seeds}
    return joined(live_dir, runs, quantity)


def confirming_curves(params: Params, headline: float, quantity: str) -> pd.DataFrame | None:
    """(step, series, quantity) rows of one quantity over the confirming runs at the headline
    rate (else the first confirming rate), one per variant and (base, seed) replicate; series
    `<variant>/seed<k>` with k the replicate's index, so that a mean over seeds is the mean over
    replicates. None unless the confirming runs train their own cvae.confirm.steps."""
    confirm = params.cvae.confirm
    if not confirm.bases or confirm.steps is None:
        return None
    rate = headline if headline in confirm.rates else confirm.rates[0]
    replicates = [(base, seed) for base in confirm.bases for seed in confirm.seeds]
    runs = {
        f"{variant}/seed{k}": Run(variant, rate, seed, base, Tier.CONFIRMING)
        for variant in confirm.variants
        for k, (base, seed) in enumerate(replicates)
    }
    return joined(params.paths.cvae_live, runs, quantity)
