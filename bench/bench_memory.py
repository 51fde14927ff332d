"""Memory (issue item 5): peak RSS of the train_cvae and evaluate stages at default params and
at ¼ of the default n_test (the default is the 4× point: an evaluate run at 4× the default
n_test alone would take about 2 minutes), each stage run as its own process on inputs prepared
in a temporary directory.

    python -m bench.bench_memory

Preparation (not measured): generate the world, save a freshly initialized base LM (memory does
not depend on its weights), score the surprisal tables and the normalizer with the stages' own
`run`. train_cvae runs `val_every` steps, so one validation pass and its logging are included;
its peak does not grow with further steps.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import yaml

from bench.common import (
    REPO_ROOT,
    Row,
    Section,
    group_args,
    merge,
    params_with,
    peak_rss_mib,
    raw_params,
    save_fresh_base,
    screening_only,
)
from zgain.params import parse_params

GROWTH_TARGET = 0.25
"""Evaluate's peak RSS may grow by at most this share when n_test grows 4× (streaming)."""


@dataclass
class Sizes:
    test_factor: int = 4
    n_test: int | None = None  # the larger n_test; None: the default (then the smaller is 1/4)


def prepare(root: Path, raw: dict, base_path: Path) -> Path:
    """A project directory under root with params.yaml (one base: `screening_only`) and every
    input of train_cvae, the base at `base_path` copied in as the screening base."""
    from stages import generate, normalizer, surprisal

    raw = screening_only(raw)
    root.mkdir(parents=True)
    (root / "params.yaml").write_text(yaml.safe_dump(raw, sort_keys=False))
    cwd = Path.cwd()
    os.chdir(root)
    try:
        params = parse_params(raw)
        base = params.base.screening
        model = Path(params.paths.base(base).base_model)
        model.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(base_path, model)
        generate.run(params.data, Path(params.paths.synthetic_dir))
        surprisal.run(params, base)
        normalizer.run(params, base)
    finally:
        os.chdir(cwd)
    return root


def stage_rss(root: Path, stage: str) -> float:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "TQDM_DISABLE": "1"}
    return peak_rss_mib(f"stages.{stage}", group_args(root), cwd=str(root), env=env)


def measure(raw: dict, sizes: Sizes) -> tuple[Section, dict[str, float]]:
    common = raw["cvae"]["common"]
    raw = merge(raw, {"cvae": {"common": {"steps": common["val_every"]}}})
    # one run per group: the peak is one process's (a group's side-by-side shares are each one)
    raw = merge(raw, {"cvae": {"rates": raw["cvae"]["rates"][:1]}})
    big = sizes.n_test or raw["data"]["n_test"]
    n_test = big // sizes.test_factor
    out: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        base_path = save_fresh_base(params_with(raw), Path(tmp) / "base.pt")
        for label, size in (("small", n_test), ("large", big)):
            scaled = merge(raw, {"data": {"n_test": size}})
            root = prepare(Path(tmp) / label, scaled, base_path)
            for stage in ("train_cvae", "evaluate"):
                out[f"{stage}_{label}"] = stage_rss(root, stage)
    growth = out["evaluate_large"] / out["evaluate_small"] - 1
    train_growth = out["train_cvae_large"] / out["train_cvae_small"] - 1
    section = Section(
        "5. Memory (peak RSS of a stage process)",
        [
            Row(
                f"train_cvae, n_test {n_test} / {big}",
                f"{out['train_cvae_small']:.0f} / {out['train_cvae_large']:.0f} MiB "
                f"({train_growth:+.0%})",
            ),
            Row(
                f"evaluate, n_test {n_test} / {big}",
                f"{out['evaluate_small']:.0f} / {out['evaluate_large']:.0f} MiB ({growth:+.0%})",
                f"≤ {GROWTH_TARGET:+.0%} for 4× n_test",
                growth <= GROWTH_TARGET,
            ),
        ],
        [
            f"Default params otherwise (n_train {raw['data']['n_train']}, evaluation K = "
            f"{raw['evaluate']['iw_samples']}, batch {raw['evaluate']['batch_size']}); "
            f"train_cvae ran {common['val_every']} steps. Peak RSS = the stage process's own VmHWM."
        ],
    )
    return section, out | {"evaluate_growth": growth}


def main(sizes: Sizes | None = None) -> list[Section]:
    section, _ = measure(raw_params(), sizes or Sizes())
    section.print()
    return [section]


if __name__ == "__main__":
    main()
