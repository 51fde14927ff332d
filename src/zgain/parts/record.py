"""Export one part of a study, load parts back, and refuse parts that do not combine."""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import yaml

from zgain.core.closure import stage_code_digest
from zgain.core.runs import Run, Tier

PART_FILE = "part.json"
RUN_KEY = ("base", "seed", "variant", "rate")
PART_LISTS = (
    ("base", "seeds"),
    ("cvae", "confirm", "bases"),
    ("cvae", "confirm", "seeds"),
    ("cvae", "confirm", "variants"),
    ("cvae", "rates"),
    ("cvae", "seeds"),
)
"""The params that may differ between parts: which bases, seeds and confirming variants each
part trained, and the screening tier's rates and seeds, which no confirming stage reads (its
rates are `cvae.confirm.rates`: dvc.yaml). A run is defined by every other param (the variants'
definitions included) and its (base, seed, variant, rate); a run two parts hold must have the
same bytes in both."""
METRICS = ("capture", "marginal_gain", "z_information", "gross_gain", "kl")
DIGEST_STAGES = ("train_cvae", "evaluate")


class PartsError(ValueError):
    """Parts that must not be combined; the message names the part and the difference."""


def training_digest(root: Path) -> str:
    """16 hex digits of sha256 over the code digests of the group stages (train_cvae and
    evaluate) of the checkout at `root`: equal digests, equal training code."""
    digests = [stage_code_digest(root, stage) for stage in DIGEST_STAGES]
    return hashlib.sha256(json.dumps(digests, sort_keys=True).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Part:
    """One exported part: its name (the folder), digest, params and runs (one row per run)."""

    name: str
    digest: str
    params: dict
    runs: pd.DataFrame


def export_part(repo: Path, out: Path, note: dict | None = None) -> Path:
    """part.json under `out` from the checkout `repo` after its run: every confirming run of
    its params, with METRICS from its metrics.json and the md5 of its examples.parquet. A run
    whose files are missing raises FileNotFoundError naming it."""
    params = yaml.safe_load((repo / "params.yaml").read_text())
    confirm = params["cvae"]["confirm"]
    eval_dir = repo / params["paths"]["eval_dir"]
    runs = []
    for base in confirm["bases"]:
        for seed in confirm["seeds"]:
            for variant in confirm["variants"]:
                for rate in confirm["rates"]:
                    run = Run(variant, float(rate), seed, base, Tier.CONFIRMING)
                    metrics = json.loads(run.eval_metrics(eval_dir).read_text())
                    md5 = hashlib.md5(run.eval_examples(eval_dir).read_bytes()).hexdigest()
                    values = {m: metrics[m] for m in METRICS}
                    runs.append(
                        {
                            **dict(zip(RUN_KEY, (base, seed, variant, float(rate)), strict=True)),
                            "md5": md5,
                            **values,
                        }
                    )
    record = {"digest": training_digest(repo), "params": params, "runs": runs, **(note or {})}
    out.mkdir(parents=True, exist_ok=True)
    path = out / PART_FILE
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(record, indent=1) + "\n")
    temporary.replace(path)
    return path


def load_part(folder: Path) -> Part:
    path = folder / PART_FILE
    if not path.is_file():
        raise PartsError(f"{folder}: no {PART_FILE} (export one with `zgain part`)")
    record = json.loads(path.read_text())
    return Part(folder.name, record["digest"], record["params"], pd.DataFrame(record["runs"]))


def without_part_lists(params: dict) -> dict:
    """`params` with the lists of what a part trained (PART_LISTS) removed."""
    kept = copy.deepcopy(params)
    for *parents, last in PART_LISTS:
        node = kept
        for key in parents:
            node = node.get(key, {})
        node.pop(last, None)
    return kept


def first_difference(a: object, b: object, path: str = "") -> str | None:
    """The dotted key of the first difference between two params trees (None when equal)."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(a.keys() | b.keys(), key=str):
            if key not in a or key not in b:
                return f"{path}{key}"
            found = first_difference(a[key], b[key], f"{path}{key}.")
            if found:
                return found
        return None
    return None if a == b else path.rstrip(".")


def value_at(params: dict, dotted: str) -> object:
    node: object = params
    for key in dotted.split("."):
        node = node.get(key) if isinstance(node, dict) else None
    return node


def check_parts(parts: Sequence[Part]) -> None:
    """Raise PartsError unless the parts share the training digest and every param but the
    lists of what each trained (PART_LISTS), and every run held by two parts has the same md5
    in both."""
    if len(parts) < 1:
        raise PartsError("no part given")
    first = parts[0]
    for part in parts[1:]:
        if part.digest != first.digest:
            raise PartsError(
                f"{part.name}: trained by other code (digest {part.digest}) than {first.name} "
                f"({first.digest})"
            )
        key = first_difference(without_part_lists(first.params), without_part_lists(part.params))
        if key is not None:
            raise PartsError(
                f"{part.name}: params differ from {first.name}'s at {key} "
                f"({value_at(part.params, key)!r} against {value_at(first.params, key)!r})"
            )
    for a, b in pairs(parts):
        shared = a.runs.merge(b.runs, on=list(RUN_KEY), suffixes=("_a", "_b"))
        moved = shared[shared["md5_a"] != shared["md5_b"]]
        if len(moved):
            r = moved.iloc[0]
            raise PartsError(
                f"{b.name} and {a.name} both hold {r.variant} C = {r.rate:g} seed {r.seed} base "
                f"{r.base} with different bytes ({len(moved)} of {len(shared)} shared runs "
                "differ): retrained on another machine or code, they are not one study"
            )


def pairs(parts: Sequence[Part]) -> Iterable[tuple[Part, Part]]:
    for i, a in enumerate(parts):
        for b in parts[i + 1 :]:
            yield a, b


def trained_variants(parts: Sequence[Part]) -> list[str]:
    """The confirming variants the parts trained, each once, in the order they first appear."""
    names = (v for p in parts for v in p.params["cvae"]["confirm"]["variants"])
    return list(dict.fromkeys(names))


def combine(parts: Sequence[Part]) -> pd.DataFrame:
    """The union of the parts' runs (each run once), after `check_parts`."""
    check_parts(parts)
    runs = pd.concat([p.runs for p in parts], ignore_index=True)
    return runs.drop_duplicates(subset=list(RUN_KEY)).sort_values(list(RUN_KEY), ignore_index=True)
