"""The frozen contract: surprisal tables, normalizer and base checkpoint must share one sha256.

Whatever reads the surprisal tables together with a base checkpoint goes through
`load_frozen`, which stops with both hashes named when they differ.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from zgain.base.normalizer import Normalizer, load_normalizer
from zgain.base.tables import read_surprisal_tables
from zgain.core.errors import DataError
from zgain.core.io import check_provenance
from zgain.params import BasePaths
from zgain.world.splits import Split


class FrozenSurprisal(NamedTuple):
    """Base surprisal of one split aligned to the split's example order."""

    surprisal: np.ndarray  # (N, T) float32 b_t, 0 off the mask
    mask: np.ndarray  # (N, T) bool
    normalizer: Normalizer
    base_sha256: str

    @property
    def sequence_surprisal(self) -> np.ndarray:
        """B_i = Σ_t b_t per example, (N,) float64 nats: the base's code length for y."""
        return np.where(self.mask, self.surprisal.astype(np.float64), 0.0).sum(axis=1)


def _aligned(
    table: pa.Table, tokens_path: Path, split: Split, width: int
) -> tuple[np.ndarray, np.ndarray]:
    """The (N, T) surprisal and mask of `split`'s examples from the checked tokens table."""
    wanted = pc.is_in(table["example_id"], value_set=pa.array(split.example_id))
    table = table.filter(wanted)
    ids = table["example_id"].to_numpy()
    positions = table["position"].to_numpy().astype(np.int64)
    order = np.argsort(split.example_id, kind="stable")
    rows = order[
        np.searchsorted(split.example_id, ids, sorter=order)
    ]  # row of each token's example
    if positions.size and positions.max() >= width:
        raise DataError(
            f"{tokens_path}: position {positions.max()} is outside the frame of width {width}"
        )
    surprisal = np.zeros((len(split), width), dtype=np.float32)
    mask = np.zeros((len(split), width), dtype=bool)
    surprisal[rows, positions] = table["surprisal"].to_numpy()
    mask[rows, positions] = True
    expected = np.arange(width)[None, :] <= split.y_len[:, None]
    if not np.array_equal(mask, expected):
        bad = int(np.nonzero((mask != expected).any(axis=1))[0][0])
        raise DataError(
            f"{tokens_path}: tokens of example {split.example_id[bad]} do not cover its "
            f"{split.y_len[bad] + 1} supervised positions "
            "(the tables do not match the synthetic data)"
        )
    return surprisal, mask


def load_frozen(paths: BasePaths, split: Split, width: int) -> FrozenSurprisal:
    """Surprisal of `split` plus the normalizer, after checking all three artefacts agree."""
    (frozen,) = load_frozen_splits(paths, [split], width)
    return frozen


def load_frozen_splits(
    paths: BasePaths, splits: Sequence[Split], width: int
) -> list[FrozenSurprisal]:
    """`load_frozen` of several splits, reading and checking the tables and hashing the base
    checkpoint once."""
    tables = read_surprisal_tables(paths.surprisal_dir)  # both tables record the same sha256
    sha = check_provenance(
        str(tables.tokens_path),
        tables.base_sha256,
        paths.base_model,
        remedy="rescore with the current base (`dvc repro surprisal`)",
    )
    normalizer = load_normalizer(paths.normalizer)
    check_provenance(
        paths.normalizer,
        normalizer.base_sha256,
        paths.base_model,
        sha,
        remedy="recompute it with the current base (`dvc repro normalizer`)",
    )
    out = []
    for split in splits:
        surprisal, mask = _aligned(tables.tokens, tables.tokens_path, split, width)
        out.append(FrozenSurprisal(surprisal, mask, normalizer, sha))
    return out
