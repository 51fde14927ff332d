"""The design: bases × seeds per tier, from measured costs and variance components.

    python -m studies.design.design REPO [--out studies/design/design-results.md]

REPO holds a completed default run. This measures, in a scratch folder on REPO's world with this
checkout's params, what one more base costs (its `train_base`, `surprisal` and `normalizer`
work, c_B), what one confirming replicate costs (training and evaluating the contested
variants at the headline rates for one (base, seed), c_s) and what one screening group costs
(one variant and seed at every rate, c_g), each timed in this process without DVC's start-up.
It reads σ_B and σ_W of every comparison over bases from REPO's tables/procedure.csv, with their
one-sided upper confidence bounds (medians over the comparisons), and writes
studies/design/design-results.md (generated): k* = √(c_B σ_W² / (c_s σ_B²)) and, for designs
around the default, the predicted stage time and the smallest difference the comparisons over
bases detect at 80% power, at the estimated σ and at their upper bounds: an estimate of σ_B
clipped at 0, or σ_W on a degree of freedom or two, says little, and the bounds say how much
worse the design may be (docs/defaults.md#the-design). Where REPO's design has one seed per
base, σ_B and σ_W are not separable and the table says so.
"""

from __future__ import annotations

import argparse
import math
import shutil
import tempfile
import time
from pathlib import Path

import pandas as pd
import yaml

from harness.machine import machine
from stages import evaluate, normalizer, surprisal, train_base, train_cvae
from zgain.core.runs import Group
from zgain.params import Params, parse_params
from zgain.report.render.markdown import markdown_table, percent, sigma_cell
from zgain.stats.power import POWER, detectable_difference, seeds_per_base

RESULTS = Path(__file__).with_name("design-results.md")
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
                train_cvae.run(params, Group.confirming_of(twin, seed)),
                evaluate.run(params, Group.confirming_of(twin, seed)),
            )
        )
        variant = params.report.baseline_variant
        cost_group = timed(
            lambda: (
                train_cvae.run(params, Group.screening(base, variant, seed)),
                evaluate.run(params, Group.screening(base, variant, seed)),
            )
        )
    return {"base": cost_base, "replicate": cost_replicate, "group": cost_group}


SIGMAS = ("sigma_b", "sigma_w", "sigma_b_upper", "sigma_w_upper")


def components(repo: Path) -> tuple[dict[str, float], pd.DataFrame]:
    """Median σ_B, σ_W and their upper bounds (SIGMAS; NaN where REPO's table has none) over
    REPO's comparisons over bases on capture, and those rows."""
    table = pd.read_csv(repo / "reports" / "tables" / "procedure.csv")
    rows = table[table["metric"] == "capture"]
    return {k: float(rows[k].median()) if k in rows else math.nan for k in SIGMAS}, rows


def detectable(sigma_b: float, sigma_w: float, bases: int, k: float, confidence: float) -> str:
    """The detectable Δ cell at level 1 − confidence: n/a with one base, or where a σ is
    undefined."""
    if bases < 2:
        return "n/a (one base)"
    value = detectable_difference(sigma_b, sigma_w, bases, k, confidence)
    return "n/a" if math.isnan(value) else f"{value:.3f}"


def design_rows(
    costs: dict[str, float], sigmas: dict[str, float], n_groups: int, default: Params
) -> list[list[str]]:
    """Candidate designs: screening seeds × confirming bases × seeds per base, with their
    predicted stage time (minutes) and detectable difference at the estimated σ and at both
    σ's upper bounds (conservative: σ_B's bound already holds part of σ_W)."""
    rows = []
    screening, confidence = default.cvae.seeds, default.report.confidence
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
                mark = ""
                if s == len(screening) and others == len(default.cvae.confirm.bases):
                    mark = " (default)" if k == len(default.cvae.confirm.seeds) else ""
                rows.append(
                    [
                        f"{s}{mark}",
                        str(bases),
                        str(k) if others else "–",
                        f"{seconds / 60:.1f}",
                        detectable(sigmas["sigma_b"], sigmas["sigma_w"], bases, k_mean, confidence),
                        detectable(
                            sigmas["sigma_b_upper"],
                            sigmas["sigma_w_upper"],
                            bases,
                            k_mean,
                            confidence,
                        ),
                    ]
                )
    return rows


def sigma_text(sigmas: dict[str, float]) -> str:
    """σ_B and σ_W with their bounds, or the design's inability to separate them."""
    if math.isnan(sigmas["sigma_w"]):
        return (
            "σ_B and σ_W are not separable (one seed per base in REPO's design: σ_W undefined; "
            f"the per-base means spread by {sigmas['sigma_b']:.3f})"
        )
    return (
        f"σ_B = {sigma_cell(sigmas['sigma_b'], sigmas['sigma_b_upper'])}, σ_W = "
        f"{sigma_cell(sigmas['sigma_w'], sigmas['sigma_w_upper'])}, the bounds one-sided at "
        "REPO's report.confidence"
    )


def markdown(costs, sigmas, rows, k_star, command, minutes, where) -> str:
    header = ["screening seeds", "bases", "seeds per other base", "stage min", "detectable Δ"]
    header.append("at σ bounds")
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
            f"comparisons on capture): {sigma_text(sigmas)}, so "
            f"k* = √(c_B σ_W² / (c_s σ_B²)) = {k_star:.2f} seeds per base at the estimates "
            "(inf when σ_B is 0: a clipped estimate, not a measured zero).",
            "",
            "Stage minutes: the predicted sum of these costs over the design's stages (install, "
            "generate, DVC's start-up per stage and the report come on top). Detectable Δ: the "
            f"smallest difference a comparison over bases detects with {percent(POWER)} power at "
            "the level of report.confidence "
            "(t over bases, noncentral t), at the measured σ_B and σ_W; at σ bounds: the same "
            "at both upper bounds, what the design may need if the bases or seeds spread as "
            "much as the data allow.",
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
    sigmas, _ = components(repo)
    costs = measure_costs(repo, max(default.base.seeds) + 1)
    k_star = (
        math.nan
        if math.isnan(sigmas["sigma_w"])
        else seeds_per_base(costs["base"], costs["replicate"], sigmas["sigma_b"], sigmas["sigma_w"])
    )
    n_groups = len(default.cvae.variants)
    rows = design_rows(costs, sigmas, n_groups, default)
    minutes = (time.perf_counter() - start) / 60
    command = "python -m studies.design.design REPO"
    text = markdown(costs, sigmas, rows, k_star, command, minutes, where)
    args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
