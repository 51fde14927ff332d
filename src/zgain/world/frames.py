"""The fixed frames every model and table uses: the vocabulary and the x and y widths.

The synthetic world derives them from params (`World.frames`); a pairs file's vocabulary is
only known once `generate` has read it, so that stage writes them to `frames.json` beside the
splits, and every later stage reads them back from there (docs/own-data.md).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from zgain.core.errors import DataError
from zgain.core.vocab import Vocab

FRAMES_FILE = "frames.json"


@dataclass(frozen=True)
class Frames:
    """Content tokens, the x frame (left-padded) and the y frame (EOS on top); `tokens` names
    the content tokens of a pairs file (empty for the synthetic world's numbered tokens)."""

    n_content: int
    max_x_len: int
    max_y_len: int
    tokens: tuple[str, ...] = field(default=())

    @property
    def vocab(self) -> Vocab:
        return Vocab(self.n_content)

    @property
    def n_targets(self) -> int:
        """T: the supervised frame, the y tokens then EOS."""
        return self.max_y_len + 1

    @property
    def max_len(self) -> int:
        """The longest model input, [x, SEP, y, EOS] in fixed frames."""
        return self.max_x_len + 1 + self.n_targets


def frames_record(frames: Frames) -> dict:
    """The JSON record `read_frames` reads back (the caller writes it atomically)."""
    record = asdict(frames)
    record["tokens"] = list(frames.tokens)
    return record


def read_frames(data_dir: str | Path) -> Frames:
    """The frames `generate` wrote for a pairs file; DataError when they are missing."""
    path = Path(data_dir) / FRAMES_FILE
    try:
        record = json.loads(path.read_text())
        return Frames(
            n_content=int(record["n_content"]),
            max_x_len=int(record["max_x_len"]),
            max_y_len=int(record["max_y_len"]),
            tokens=tuple(record["tokens"]),
        )
    except FileNotFoundError:
        raise DataError(f"{path}: missing (rerun `dvc repro generate`)") from None
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise DataError(f"{path}: not a frames record ({err})") from None
