"""Does an extended study reuse the default's runs byte for byte?

    python -m studies.nesting.nesting snapshot REPO > default.json
    (extend REPO: e.g. dvc exp run -S 'base.seeds=[…]' -S 'cvae.confirm.bases=[…]')
    python -m studies.nesting.nesting compare REPO default.json \
        --out reports/examples/NAME/nesting.json

`snapshot` records the md5 of every run's examples.parquet under REPO's `paths.eval_dir`;
`compare` records them again after the extension and writes, for every run present in both,
whether the bytes are equal, and which runs the extension added. An example that extends the
default grid reuses its runs when every shared run is equal (README#examples).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

import yaml

from zgain.core.runs import EXAMPLES_FILE


def md5s(repo: Path) -> dict[str, str]:
    """md5 of each run's examples.parquet, keyed by its path relative to REPO."""
    params = yaml.safe_load((repo / "params.yaml").read_text())
    root = repo / params["paths"]["eval_dir"]
    return {
        path.relative_to(repo).as_posix(): hashlib.md5(path.read_bytes()).hexdigest()
        for path in sorted(root.rglob(EXAMPLES_FILE))
    }


def compare(before: dict[str, str], after: dict[str, str]) -> dict:
    """The shared runs (equal or not) and the added ones."""
    shared = sorted(before.keys() & after.keys())
    return {
        "shared_runs": len(shared),
        "shared_equal": sum(before[k] == after[k] for k in shared),
        "differing": [k for k in shared if before[k] != after[k]],
        "added_runs": sorted(after.keys() - before.keys()),
        "md5": {k: after[k] for k in shared},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    snap = sub.add_parser("snapshot", help="print REPO's md5s as JSON")
    snap.add_argument("repo", type=Path)
    comp = sub.add_parser("compare", help="compare REPO now with a snapshot")
    comp.add_argument("repo", type=Path)
    comp.add_argument("snapshot", type=Path)
    comp.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    if args.command == "snapshot":
        json.dump(md5s(args.repo), sys.stdout, indent=1)
        return
    result = compare(json.loads(args.snapshot.read_text()), md5s(args.repo))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(
        f"{result['shared_equal']} of {result['shared_runs']} shared runs byte-identical; "
        f"{len(result['added_runs'])} added"
    )


if __name__ == "__main__":
    main()
