"""Screening groups of this checkout's params trained outside DVC, on the upstream outputs of a
completed run: the params (whole, cut to the screening base, or pointed at a completed run) and
the training and evaluation of each group in this process."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

import yaml

from zgain.params import Params, parse_params
from zgain.params.profile import merge

REPO_ROOT = Path(__file__).resolve().parent.parent


def raw_params(profile: dict | None = None) -> dict:
    """params.yaml as plain Python, with a profile (e.g. the tiny test profile) merged in."""
    raw = yaml.safe_load((REPO_ROOT / "params.yaml").read_text())
    return merge(raw, profile) if profile else raw


UPSTREAM = ("synthetic_dir", "bases_dir", "base_live", "surprisal_dir", "normalizer_dir")
"""The path keys of a run's inputs from the stages before train_cvae (the roots of every base's
files: `paths.base(b)`)."""
RUN_OUTPUTS = ("cvae_dir", "cvae_live", "eval_dir", "reports_dir")


def screening_only(raw: dict) -> dict:
    """`raw` with one base, its first (the screening base), and so no confirming bases; the
    confirming tier's variants and rates cut to those `raw` lists (the first of each when none
    is left). The benchmarks train screening groups only, often on a grid cut to a rate or a
    variant, which the confirming tier must name (docs/architecture.md#bases)."""
    cvae = raw["cvae"]
    confirm = cvae["confirm"]
    variants = [v for v in confirm["variants"] if v in cvae["variants"]]
    rates = [r for r in confirm["rates"] if r in cvae["rates"]]
    tier = {
        "bases": [],
        "variants": variants or list(cvae["variants"])[:1],
        "rates": rates or list(cvae["rates"])[:1],
    }
    return merge(raw, {"base": {"seeds": raw["base"]["seeds"][:1]}, "cvae": {"confirm": tier}})


def on_completed_run(repo: Path, scratch: Path, cvae: dict) -> Params:
    """This checkout's params with `cvae` merged into its cvae block, reading the upstream
    outputs (world, screening base, its surprisal and normalizer) of the completed run in `repo`
    and writing the runs under `scratch`, never in `repo`."""
    raw = raw_params()
    for key in UPSTREAM:
        raw["paths"][key] = str(repo / raw["paths"][key])
    for key in RUN_OUTPUTS:
        raw["paths"][key] = str(scratch / key)
    raw["cvae"] = merge(raw["cvae"], cvae)
    return parse_params(screening_only(raw))


def params_with(raw: dict, **overrides: dict) -> Params:
    """Validated params from `raw` with block overrides, e.g. params_with(raw, data={...}),
    on the screening base alone (`screening_only`)."""
    return parse_params(screening_only(merge(raw, overrides)))


def train_and_evaluate(
    params: Params, variants: Sequence[str], seeds: Sequence[int], label: str
) -> float:
    """Train and evaluate every screening group (variant, seed) of `params` in this process;
    the mean seconds per group."""
    from stages import evaluate, train_cvae
    from zgain.core.runs import Group

    base = params.base.screening
    start = time.perf_counter()
    for seed in seeds:
        for variant in variants:
            train_cvae.run(params, Group.screening(base, variant, seed))
            evaluate.run(params, Group.screening(base, variant, seed))
            print(f"{label}: {variant} seed {seed} done", flush=True)
    return (time.perf_counter() - start) / (len(variants) * len(seeds))
