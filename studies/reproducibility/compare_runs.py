"""Compare the outputs of two pipeline runs: every number to a tolerance (default 1e-9).

    python studies/reproducibility/compare_runs.py RUN_A RUN_B [--tol 1e-9]

Walks Parquet tables (every numeric column, lists flattened), JSON (numbers leaf by leaf),
CSV tables and checkpoints (every tensor of the state dict) present in both runs under data/,
models/, dvclive/ and reports/, and prints the largest absolute difference per file. Exits 1
if any difference exceeds the tolerance or a file exists in only one run. Keys recording the
run itself (wall time, environment) are skipped.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import torch

ROOTS = ("data", "models", "dvclive", "reports")
RUN_KEYS = {"train_seconds", "environment", "timestamp"}


def _flatten_json(value, prefix=""):
    if isinstance(value, dict):
        for key, inner in value.items():
            if key not in RUN_KEYS:
                yield from _flatten_json(inner, f"{prefix}.{key}")
    elif isinstance(value, list):
        for i, inner in enumerate(value):
            yield from _flatten_json(inner, f"{prefix}[{i}]")
    else:
        yield prefix, value


def _diff_values(a: dict, b: dict) -> float:
    if set(a) != set(b):
        raise ValueError(f"keys differ: {sorted(set(a) ^ set(b))[:5]}")
    worst = 0.0
    for key, va in a.items():
        vb = b[key]
        if isinstance(va, int | float) and isinstance(vb, int | float):
            if math.isnan(va) and math.isnan(vb):
                continue
            worst = max(worst, abs(float(va) - float(vb)))
        elif va != vb:
            raise ValueError(f"{key}: {va!r} != {vb!r}")
    return worst


def _column_values(table) -> dict:
    out = {}
    for name in table.column_names:
        column = table[name].combine_chunks()
        while hasattr(column, "flatten") and str(column.type).startswith("list"):
            column = column.flatten()
        values = column.to_numpy(zero_copy_only=False)
        for i, v in enumerate(values):
            out[f"{name}[{i}]"] = v.item() if hasattr(v, "item") else v
    return out


def diff_file(a: Path, b: Path) -> float:
    if a.suffix == ".parquet":
        return _diff_values(_column_values(pq.read_table(a)), _column_values(pq.read_table(b)))
    if a.suffix == ".json":
        return _diff_values(
            dict(_flatten_json(json.loads(a.read_text()))),
            dict(_flatten_json(json.loads(b.read_text()))),
        )
    if a.suffix == ".csv":
        fa, fb = pd.read_csv(a), pd.read_csv(b)
        fa = fa.drop(columns=[c for c in fa if c in RUN_KEYS], errors="ignore")
        fb = fb.drop(columns=[c for c in fb if c in RUN_KEYS], errors="ignore")
        return _diff_values(
            {f"{c}[{i}]": v for c in fa for i, v in enumerate(fa[c])},
            {f"{c}[{i}]": v for c in fb for i, v in enumerate(fb[c])},
        )
    if a.suffix == ".pt":
        sa = torch.load(a, weights_only=True)["state_dict"]
        sb = torch.load(b, weights_only=True)["state_dict"]
        if set(sa) != set(sb):
            raise ValueError(f"state dict keys differ: {sorted(set(sa) ^ set(sb))[:5]}")
        return max(
            float((sa[k].double() - sb[k].double()).abs().max()) if sa[k].numel() else 0.0
            for k in sa
        )
    if a.suffix == ".md":
        return 0.0 if a.read_text() == b.read_text() else math.inf
    raise ValueError(f"no comparison for {a.suffix}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_a", type=Path)
    parser.add_argument("run_b", type=Path)
    parser.add_argument("--tol", type=float, default=1e-9)
    args = parser.parse_args()
    suffixes = {".parquet", ".json", ".csv", ".pt", ".md"}
    files_a = {
        p.relative_to(args.run_a)
        for root in ROOTS
        for p in (args.run_a / root).rglob("*")
        if p.suffix in suffixes and p.is_file()
    }
    files_b = {
        p.relative_to(args.run_b)
        for root in ROOTS
        for p in (args.run_b / root).rglob("*")
        if p.suffix in suffixes and p.is_file()
    }
    failed = False
    for only in sorted(files_a ^ files_b):
        print(f"ONLY IN ONE RUN  {only}")
        failed = True
    for rel in sorted(files_a & files_b):
        try:
            worst = diff_file(args.run_a / rel, args.run_b / rel)
            status = "ok  " if worst <= args.tol else "DIFF"
            failed |= worst > args.tol
            print(f"{status} {worst:.3e}  {rel}")
        except ValueError as err:
            failed = True
            print(f"DIFF  {rel}: {err}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
