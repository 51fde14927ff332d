"""A split of the world packed into the models' fixed frames (`zgain.core.sequences`)."""

from __future__ import annotations

from pathlib import Path

from zgain.core.sequences import SeqBatch, pack
from zgain.world.splits import Split, load_split
from zgain.world.synthetic import World


def pack_split(split: Split, world: World) -> SeqBatch:
    """A whole split laid out in the world's fixed frames."""
    return pack(
        split.x,
        split.x_len,
        split.y,
        split.y_len,
        vocab=world.vocab,
        max_x_len=world.max_x_len,
        max_y_len=world.max_y_len,
    )


def load_packed(synthetic_dir: str | Path, split: str, world: World) -> tuple[Split, SeqBatch]:
    """`<synthetic_dir>/<split>.parquet` as padded arrays and as a packed batch."""
    data = load_split(Path(synthetic_dir) / f"{split}.parquet", world)
    return data, pack_split(data, world)
