"""tables/mismatch.csv: where each base departs from the oracle, by target position.

On the test split of the synthetic world every token has the base's surprisal b_t and the
oracle's b*_t (data/surprisal/<b>/tokens.parquet); their gap b_t − b*_t ≥ 0 in expectation is
the base's mismatch, the part of b_t that is neither ambiguity nor noise of the world
(docs/method.md#mismatch). A pairs file has no per-token oracle: no rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from zgain.core.errors import DataError
from zgain.report.markdown import pivot
from zgain.report.registry import MISMATCH

TOKENS_FILE = "tokens.parquet"


def base_mismatch(surprisal_dir: str | Path, base: int) -> pd.DataFrame:
    """One base's rows of registry.MISMATCH: per target position of the test split, the token
    count and the means of b_t, b*_t and b_t − b*_t (nats); empty without a per-token oracle."""
    path = Path(surprisal_dir) / TOKENS_FILE
    if not path.is_file():
        raise DataError(f"{path} not found: run `dvc repro surprisal@{base}`")
    columns = ["position", "surprisal", "oracle_surprisal"]
    tokens = pd.read_parquet(path, columns=columns, filters=[("split", "==", "test")])
    if tokens.empty or tokens["oracle_surprisal"].isna().all():
        return MISMATCH.frame([])
    tokens = tokens.assign(mismatch=tokens["surprisal"] - tokens["oracle_surprisal"])
    grouped = tokens.groupby("position", sort=True)
    table = grouped[["surprisal", "oracle_surprisal", "mismatch"]].mean()
    table = table.rename(columns={"surprisal": "base_surprisal"})
    table.insert(0, "n_tokens", grouped.size())
    return table.reset_index().assign(base=base)[list(MISMATCH.columns)]


def mismatch_table(per_base: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """Every base's rows, in base order (empty when no base has a per-token oracle)."""
    frames = [frame for frame in per_base if not frame.empty]
    if not frames:
        return MISMATCH.frame([])
    return pd.concat(frames, ignore_index=True)


def mismatch_rows(table: pd.DataFrame) -> tuple[list[str], list[list[str]]]:
    """The summary's view: a header of positions, the oracle's mean b*_t (the same split for
    every base: the first base's), then each base's mean b_t − b*_t."""
    positions = sorted(table["position"].unique())
    header = ["", *(f"t = {p}" for p in positions)]
    first = table[table["base"] == table["base"].iloc[0]].set_index("position")
    rows = [["oracle b*_t", *(f"{first.loc[p, 'oracle_surprisal']:.3f}" for p in positions)]]
    text = lambda r: f"{r['mismatch']:+.3f}"  # noqa: E731
    rows += pivot(
        table, "base", "position", text, positions, label=lambda b: f"base {b}: b_t − b*_t"
    )
    return header, rows
