"""Stage `code_digest`: for each group stage, one file naming the library code it imports.

`train_cvae@…` and `evaluate@…` depend on `<paths.code_dir>/<stage>.json` instead of on each
library file (docs/architecture.md#code-digests). This stage depends on every one of those
files, so an edit reruns it; the digest it writes changes only when a file the group stage
imports changed, and only then do that stage's groups rerun.
"""

from __future__ import annotations

from pathlib import Path

from zgain.core.cli import run_stage
from zgain.core.closure import stage_code_digest
from zgain.core.io import sweep_temporaries, write_json
from zgain.core.runs import GROUP_STAGES
from zgain.params import Params, load_params


def run(params: Params, root: Path) -> None:
    outputs = [Path(params.paths.code_dir) / f"{stage}.json" for stage in GROUP_STAGES]
    sweep_temporaries(*outputs)
    for stage, path in zip(GROUP_STAGES, outputs, strict=True):
        write_json(stage_code_digest(root, stage), path)


def main() -> None:
    run(load_params(), Path.cwd())


if __name__ == "__main__":
    run_stage(main)
