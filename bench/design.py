"""The design: bases × seeds per tier, from measured costs and variance components.

    python -m bench.design REPO [--out bench/design-results.md]

REPO holds a completed default run. This measures, in a scratch folder on REPO's world with this
checkout's params, what one more base costs (its `train_base`, `surprisal` and `normalizer`
work, c_B), what one confirming replicate costs (training and evaluating the contested
variants at the headline rates for one (base, seed), c_s) and what one screening group costs
(one variant and seed at every rate, c_g), each timed in this process without DVC's start-up.
It reads σ_B and σ_W of every comparison over bases from REPO's tables/procedure.csv (their
medians), and writes bench/design-results.md (generated): k* = √(c_B σ_W² / (c_s σ_B²)) and, for
designs around the default, the predicted stage time and the smallest difference the
comparisons over bases detect at 80% power (docs/defaults.md#the-design).
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

import pandas as pd
import yaml

from bench.timing import machine
from stages import evaluate, normalizer, surprisal, train_base, train_cvae
from zgain.params import Params, parse_params
from zgain.report.markdown import markdown_table
from zgain.report.procedure import detectable_difference, seeds_per_base

RESULTS = Path(__file__).with_name("design-results.md")
CONFIDENCE = 0.95
SCRATCH_KEYS = ("bases_dir", "base_live", "surprisal_dir", "normalizer_dir", "cvae_dir")
SCRATCH_KEYS += ("cvae_live", "eval_dir", "reports_dir")


def scratch_params(repo: Path, scratch: Path, bases: list[int]) -> Params:
    """This checkout's params on REPO's world, with `bases` (the first screening, the others
    confirming) and every output under `scratch`."""
    raw = yaml.safe_load(Path("params.yaml").read_text())
    paths = raw["paths"]
    paths["synthetic_dir"] = str(repo / paths["synthetic_dir"])
    for key in SCRATCH_KEYS:
        paths[key] = str(scratch / paths[key])
    raw["base"]["seeds"] = bases
    raw["cvae"]["confirm"]["bases"] = bases[1:]
    return parse_params(raw)


def timed(work) -> float:
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


def measure_costs(repo: Path, base: int) -> dict[str, float]:
    """Seconds of one base, one confirming replicate and one screening group, on base `base`."""
    with tempfile.TemporaryDirectory() as scratch:
        twin = base + 1000  # the same base under a confirming seed: copied, not retrained
        params = scratch_params(repo, Path(scratch), [base, twin])

        def one_base() -> None:
            train_base.run(params, base)
            surprisal.run(params, base)
            normalizer.run(params, base)

        cost_base = timed(one_base)
        first, second = params.paths.base(base), params.paths.base(twin)
        for key in ("base_model", "base_meta", "normalizer"):
            Path(getattr(second, key)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(getattr(first, key), getattr(second, key))
        shutil.copytree(first.surprisal_dir, second.surprisal_dir)
        seed = params.cvae.confirm.seeds[0]
        cost_replicate = timed(
            lambda: (
                train_cvae.run(params, twin, None, seed),
                evaluate.run(params, twin, None, seed),
            )
        )
        variant = params.report.baseline_variant
        cost_group = timed(
            lambda: (
                train_cvae.run(params, base, variant, seed),
                evaluate.run(params, base, variant, seed),
            )
        )
    return {"base": cost_base, "replicate": cost_replicate, "group": cost_group}


def components(repo: Path) -> tuple[float, float, pd.DataFrame]:
    """Median σ_B and σ_W over REPO's comparisons over bases on capture, and those rows."""
    table = pd.read_csv(repo / "reports" / "tables" / "procedure.csv")
    rows = table[table["metric"] == "capture"]
    return float(rows["sigma_b"].median()), float(rows["sigma_w"].median()), rows


def design_rows(
    costs: dict[str, float], sigma_b: float, sigma_w: float, n_groups: int, default: Params
) -> list[list[str]]:
    """Candidate designs: screening seeds × confirming bases × seeds per base, with their
    predicted stage time (minutes) and detectable difference."""
    rows = []
    screening = default.cvae.seeds
    for s in sorted({2, 3, len(screening)}):
        for others in (0, 3, 4, 5, 6):
            for k in (1, 2):
                if others == 0 and k == 2:
                    continue
                seconds = costs["base"] * (1 + others) + s * n_groups * costs["group"]
                seconds += others * k * costs["replicate"]
                bases = 1 + others
                # the screening base carries s replicates, every other k: the design's mean k
                k_mean = (s + others * k) / bases
                mdd = detectable_difference(sigma_b, sigma_w, bases, k_mean, CONFIDENCE)
                mark = ""
                if s == len(screening) and others == len(default.cvae.confirm.bases):
                    mark = " (default)" if k == len(default.cvae.confirm.seeds) else ""
                rows.append(
                    [
                        f"{s}{mark}",
                        str(bases),
                        str(k) if others else "–",
                        f"{seconds / 60:.1f}",
                        "n/a (one base)" if bases < 2 else f"{mdd:.3f}",
                    ]
                )
    return rows


def markdown(costs, sigma_b, sigma_w, rows, k_star, command, minutes, where) -> str:
    header = ["screening seeds", "bases", "seeds per other base", "stage min", "detectable Δ"]
    return "\n".join(
        [
            "# The design",
            "",
            f"Generated by `{command}` ({minutes:.1f} min); do not edit by hand.",
            "",
            *where,
            "",
            f"Measured here, in one process without DVC: one base (train, surprisal, "
            f"normalizer) c_B = {costs['base']:.0f} s; one confirming replicate (the contested "
            f"variants at the headline rate, train and evaluate) c_s = "
            f"{costs['replicate']:.0f} s; one screening group (one variant and seed at every "
            f"rate) {costs['group']:.0f} s. From REPO's tables/procedure.csv (median over the "
            f"comparisons on capture): σ_B = {sigma_b:.3f}, σ_W = {sigma_w:.3f}, so "
            f"k* = √(c_B σ_W² / (c_s σ_B²)) = {k_star:.2f} seeds per base.",
            "",
            "Stage minutes: the predicted sum of these costs over the design's stages (install, "
            "generate, DVC's start-up per stage and the report come on top). Detectable Δ: the "
            "smallest difference a comparison over bases detects with 80% power at the 5% level "
            "(t over bases, noncentral t), at the measured σ_B and σ_W.",
            "",
            markdown_table(header, rows),
            "",
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo", type=Path, help="a clone with a completed default run")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    repo = args.repo.resolve()
    start, where = time.perf_counter(), machine()
    default = parse_params(yaml.safe_load(Path("params.yaml").read_text()))
    sigma_b, sigma_w, _ = components(repo)
    costs = measure_costs(repo, max(default.base.seeds) + 1)
    k_star = seeds_per_base(costs["base"], costs["replicate"], sigma_b, sigma_w)
    n_groups = len(default.cvae.variants)
    rows = design_rows(costs, sigma_b, sigma_w, n_groups, default)
    minutes = (time.perf_counter() - start) / 60
    text = markdown(
        costs, sigma_b, sigma_w, rows, k_star, "python -m bench.design REPO", minutes, where
    )
    args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
