"""Checkpoint files: {"kind", "config", "state_dict", **extra}, written atomically.

Building the model back from "config" belongs to the model's own package (`zgain.base.model`,
`zgain.cvae.model`); this module only moves the payload to and from disk.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import torch
from torch import nn

from zgain.core.errors import DataError
from zgain.core.io import atomic_path

RESERVED_KEYS = ("kind", "config", "state_dict")


def write_checkpoint(
    path: str | Path,
    kind: str,
    config: dict[str, Any],
    model: nn.Module,
    extra: dict[str, Any] | None = None,
) -> None:
    """Atomically torch.save the payload; extra holds plain Python values (loads weights_only)."""
    extra = dict(extra or {})
    clash = sorted(set(extra) & set(RESERVED_KEYS))
    if clash:
        raise ValueError(f"extra: keys {clash} are reserved")
    payload = {
        "kind": kind,
        "config": config,
        "state_dict": {k: v.detach().cpu() for k, v in model.state_dict().items()},
        **extra,
    }
    with atomic_path(path) as tmp, open(tmp, "wb") as handle:
        torch.save(payload, handle)


ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*m")


def load_failure(err: Exception) -> str:
    """Why torch.load failed, in one line. torch wraps an unpickling failure of a weights-only
    load in a paragraph of advice; the reason is the text after "Unpickler error:" (a refused
    object, or a damaged pickle)."""
    text = ANSI_ESCAPE.sub("", str(err))
    marker = "Unpickler error:"
    if marker in text:
        after = text.split(marker, 1)[1].strip()
        reason = after.split("\n\n", 1)[0].split(". ", 1)[0].strip()
        reason = " ".join(reason.split())
        if reason.startswith("Unsupported global"):
            return f"an object that is not plain data: {reason}"
        return f"a damaged pickle: {reason}" if reason else "a damaged pickle"
    lines = [" ".join(line.split()) for line in text.splitlines() if line.strip()]
    return "; ".join(lines[:2]) if lines else type(err).__name__


def read_checkpoint(path: str | Path, kind: str) -> dict[str, Any]:
    """The checkpoint dict at `path`, on CPU; DataError naming the path if it is not a `kind`."""
    path = Path(path)
    if not path.is_file():
        raise DataError(f"{path}: file not found")
    try:
        payload = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # torch raises several types for a corrupt file
        raise DataError(f"{path}: not a readable checkpoint ({load_failure(err)})") from err
    found = payload.get("kind") if isinstance(payload, dict) else None
    if found != kind:
        raise DataError(f"{path}: checkpoint kind is {found!r}, expected {kind!r}")
    return payload
