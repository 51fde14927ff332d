"""The global normalizer N = E[b] (and N_seq = E[B]) over the train split.

docs/method.md#the-base-model-and-its-surprisal.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from zgain.base.tables import SurprisalTables
from zgain.core.errors import DataError
from zgain.core.io import read_json

NORMALIZER_SPLIT = "train"


@dataclass(frozen=True)
class Normalizer:
    mean_surprisal: float  # N = E[b] over train examples, nats per token
    mean_surprisal_sum: float  # N_seq = E[B] over train examples, nats per sequence
    n_examples: int
    n_tokens: int
    split: str
    base_sha256: str

    def to_json(self) -> dict:
        return asdict(self)


def mean_surprisal(surprisal_mean: pa.Array | pa.ChunkedArray) -> float:
    """N = E[b]: the mean over examples of each example's token-mean surprisal b_i, so every
    example counts once whatever its length (not the mean over pooled tokens)."""
    return pc.mean(surprisal_mean).as_py()


def compute_normalizer(tables: SurprisalTables) -> Normalizer:
    """E[b] and E[B] over the train rows of the examples table; other splits are ignored.

    `tables` comes from `zgain.base.tables.read_surprisal_tables`, which has checked them.
    """
    table = tables.examples
    train = table.filter(pc.equal(table["split"], NORMALIZER_SPLIT))
    if train.num_rows == 0:
        raise DataError(f"{tables.examples_path}: no rows with split == {NORMALIZER_SPLIT!r}")
    return Normalizer(
        mean_surprisal=mean_surprisal(train["surprisal_mean"]),
        mean_surprisal_sum=pc.mean(train["surprisal_sum"]).as_py(),
        n_examples=train.num_rows,
        n_tokens=int(pc.sum(train["n_tokens"]).as_py()),
        split=NORMALIZER_SPLIT,
        base_sha256=tables.base_sha256,
    )


def load_normalizer(path: str | Path) -> Normalizer:
    raw = read_json(path)
    try:
        normalizer = Normalizer(**raw)
    except TypeError as err:
        raise DataError(f"{path}: not a normalizer file ({err})") from err
    if not normalizer.mean_surprisal > 0:
        raise DataError(f"{path}: mean_surprisal must be > 0, got {normalizer.mean_surprisal}")
    return normalizer
