"""The training code digest an example records in its run.json (`train_code_digest`).

    python examples/code_digest.py

One short hash over the library files the `train_cvae` and `evaluate` stages import
(zgain.core.closure.stage_code_digest, the digests those stages depend on): an example whose
recorded digest is not current was trained by other code, and the docs that link it must say
which older design it shows (tests/test_examples_current.py).

A digest stays current across a change of that code that leaves every output of the default run
byte-identical: `equivalent_digests.json` beside this file records each such change, the digest
before and after and the two commits whose dvc.lock files show the same outputs of every group
stage (docs/architecture.md#code-digests; tests/test_equivalent_digests.py checks each record).
"""

from __future__ import annotations

import json
from pathlib import Path

from zgain.parts.record import training_digest as digest_of

ROOT = Path(__file__).resolve().parents[1]
EQUIVALENT = Path(__file__).with_name("equivalent_digests.json")


def training_digest(root: Path = ROOT) -> str:
    """16 hex digits of sha256 over the two group stages' code digests (the digest a part of a
    study records too: zgain.parts.record.training_digest)."""
    return digest_of(root)


def equivalence_records(path: Path = EQUIVALENT) -> list[dict[str, str]]:
    """The records of `equivalent_digests.json`: {digest, same_outputs_as, before, after}."""
    return json.loads(path.read_text()) if path.is_file() else []


def current_digests(root: Path = ROOT, path: Path = EQUIVALENT) -> set[str]:
    """Today's digest and every earlier one whose code gave the default run the same outputs,
    through a chain of equivalence records."""
    current = {training_digest(root)}
    records = equivalence_records(path)
    while True:
        more = {r["same_outputs_as"] for r in records if r["digest"] in current} - current
        if not more:
            return current
        current |= more


if __name__ == "__main__":
    print(training_digest())
