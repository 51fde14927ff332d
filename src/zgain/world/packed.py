"""A split packed into the models' fixed frames (`zgain.core.sequences`), and the frames of
the configured data source."""

from __future__ import annotations

from pathlib import Path

from zgain.core.sequences import SeqBatch, pack
from zgain.params import DataParams, Params
from zgain.world.frames import Frames, read_frames
from zgain.world.splits import Split, load_split
from zgain.world.synthetic import World


def frames_of(params: Params) -> Frames:
    """The synthetic world's frames from params; a pairs file's from its `frames.json`."""
    if isinstance(params.data, DataParams):
        return World.from_params(params.data).frames
    return read_frames(params.paths.synthetic_dir)


def pack_split(split: Split, frames: Frames) -> SeqBatch:
    """A whole split laid out in the fixed frames."""
    return pack(
        split.x,
        split.x_len,
        split.y,
        split.y_len,
        vocab=frames.vocab,
        max_x_len=frames.max_x_len,
        max_y_len=frames.max_y_len,
    )


def load_packed(data_dir: str | Path, split: str, frames: Frames) -> tuple[Split, SeqBatch]:
    """`<data_dir>/<split>.parquet` as padded arrays and as a packed batch."""
    data = load_split(Path(data_dir) / f"{split}.parquet", frames)
    return data, pack_split(data, frames)
