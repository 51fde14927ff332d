"""The training code digest an example records in its run.json (`train_code_digest`).

    python examples/code_digest.py

One short hash over the library files the `train_cvae` and `evaluate` stages import
(zgain.core.closure.stage_code_digest, the digests those stages depend on): an example whose
recorded digest differs was trained by other code, and the docs that link it must say which
older design it shows (tests/test_examples_current.py).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from zgain.core.closure import stage_code_digest

ROOT = Path(__file__).resolve().parents[1]
STAGES = ("train_cvae", "evaluate")


def training_digest(root: Path = ROOT) -> str:
    """16 hex digits of sha256 over the two group stages' code digests."""
    digests = [stage_code_digest(root, stage) for stage in STAGES]
    return hashlib.sha256(json.dumps(digests, sort_keys=True).encode()).hexdigest()[:16]


if __name__ == "__main__":
    print(training_digest())
