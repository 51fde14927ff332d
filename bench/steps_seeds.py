"""Steps against seeds: what shorter runs buy in seeds, measured end to end.

    python -m bench.steps_seeds REPO [--steps 200 300] [--seeds 0 1 2 3 4]

REPO holds a completed default run. For each `--steps` value, VARIANTS are trained and
evaluated at RATES (the headline rate and the one below it) for every seed, on REPO's upstream
outputs (world, base, surprisal, normalizer) with this checkout's params otherwise, in a
scratch folder (never in REPO). bench/steps-seeds-results.md (generated) then gives, per steps
value and variant, the capture at the headline rate adjusted to exactly C as the report does
(`zgain.report.adjust`; the frontier slope here comes from the two rates, where the default
grid's four give a central difference), its seed sd and the half-width of its 95% t-interval
over the first 3, 4 and 5 seeds; the same for REPO's own runs at its steps (the seeds it
holds); and the seed sd of raw capture on the whole test split and on each half of it, which
says whether fewer test examples would widen the seed spread.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from bench.timing import machine
from bench.workload import on_completed_run, train_and_evaluate
from zgain.core.runs import Run
from zgain.params import Params, load_params
from zgain.report.adjust import adjust_to_rate, frontier_slopes
from zgain.report.statistics import t_interval

RESULTS = Path(__file__).with_name("steps-seeds-results.md")
VARIANTS = ("token_mean", "token_sum", "dist_normalized", "mean_tok")
"""The variants whose headline half-width the study grid is sized for."""
RATES = (0.5, 1.0)
HEADLINE = 1.0
SEED_COUNTS = (3, 4, 5)
CONFIDENCE = 0.95


def slice_params(repo: Path, scratch: Path, steps: int, seeds: list[int]) -> Params:
    """This checkout's params at `steps`, RATES and `seeds` on REPO's upstream outputs."""
    return on_completed_run(
        repo, scratch, {"common": {"steps": steps}, "rates": list(RATES), "seeds": seeds}
    )


def halves_capture(examples: pd.DataFrame) -> tuple[float, float, float]:
    """Raw capture (mean M − L over mean I*) on all examples, the first half and the second."""
    gain = (examples["nll_marginal"] - examples["nll_post"]).to_numpy()
    oracle = examples["oracle_info"].to_numpy()
    half = len(gain) // 2
    parts = [slice(None), slice(0, half), slice(half, None)]
    return tuple(float(gain[p].mean() / oracle[p].mean()) for p in parts)  # type: ignore[return-value]


def adjusted_capture(eval_dir: Path, variant: str, seeds: list[int], base: int) -> np.ndarray:
    """Each seed's capture at HEADLINE adjusted to exactly C, the frontier slope from the seed
    means at RATES (`zgain.report.adjust`, as the report does), of the screening runs on
    `base`."""
    kl, capture = {}, {}
    for rate in RATES:
        runs = [Run(variant, rate, s, base).eval_dir(eval_dir) for s in seeds]
        metrics = [json.loads((where / "metrics.json").read_text()) for where in runs]
        kl[rate] = np.array([m["kl"] for m in metrics])
        capture[rate] = np.array([m["capture"] for m in metrics])
    slope = frontier_slopes([kl[r].mean() for r in RATES], [capture[r].mean() for r in RATES])[
        RATES.index(HEADLINE)
    ]
    return adjust_to_rate(capture[HEADLINE], kl[HEADLINE], HEADLINE, slope)


def summarize(
    label: str, eval_dir: Path, seeds: list[int], seconds: float | None, base: int
) -> list[dict]:
    """One row per variant: adjusted headline capture over the seeds of the screening runs on
    `base`, and the halves' spread."""
    rows = []
    for variant in VARIANTS:
        adjusted = adjusted_capture(eval_dir, variant, seeds, base)
        runs = [Run(variant, HEADLINE, s, base).eval_dir(eval_dir) for s in seeds]
        halves = [halves_capture(pd.read_parquet(w / "examples.parquet")) for w in runs]
        spread = np.array(halves).std(axis=0, ddof=1)
        row = {
            "run": label,
            "variant": variant,
            "seeds": len(seeds),
            "capture": float(adjusted.mean()),
            "sd": float(adjusted.std(ddof=1)),
            **{
                f"half-width, {n} seeds": t_interval(adjusted[:n], CONFIDENCE).high
                - float(adjusted[:n].mean())
                for n in SEED_COUNTS
                if n <= len(seeds)
            },
            "raw sd: all / first / second half": " / ".join(f"{v:.3f}" for v in spread),
            "s per group": seconds,
        }
        rows.append(row)
    return rows


def measure(repo: Path, steps: int, seeds: list[int]) -> list[dict]:
    with tempfile.TemporaryDirectory() as scratch:
        params = slice_params(repo, Path(scratch), steps, seeds)
        seconds = train_and_evaluate(params, VARIANTS, seeds, f"{steps} steps")
        eval_dir, base = Path(params.paths.eval_dir), params.base.screening
        return summarize(f"{steps} steps", eval_dir, seeds, seconds, base)


def markdown(rows: list[dict], command: str, minutes: float, where: list[str]) -> str:
    columns = [c for c in rows[0] if c != "run"] + [c for r in rows for c in r if c not in rows[0]]
    columns = list(dict.fromkeys(columns))

    def cell(value: object) -> str:
        if value is None or (isinstance(value, float) and np.isnan(value)):
            return ""
        return f"{value:.3f}" if isinstance(value, float) else str(value)

    lines = [
        "# Steps against seeds",
        "",
        f"Generated by `{command}` ({minutes:.1f} min); do not edit by hand.",
        "",
        *where,
        "",
        f"Capture at C = {HEADLINE} adjusted to exactly C (frontier slope from C = "
        f"{' and '.join(map(str, RATES))}), mean and sd over the seeds; half-width of the "
        f"{CONFIDENCE:.0%} t-interval over the first n seeds. `raw sd`: the seed sd of "
        "unadjusted capture computed on the whole test split, its first half and its second "
        "half. `s per group`: train + evaluate of one (variant, seed) group of "
        f"{len(RATES)} rates in one process (no stage start-up, no DVC); empty for the "
        "completed default run, whose runs were not timed here.",
        "",
        "| run | " + " | ".join(columns) + " |",
        "|---|" + "---|" * len(columns),
    ]
    for row in rows:
        lines.append(f"| {row['run']} | " + " | ".join(cell(row.get(c)) for c in columns) + " |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo", type=Path, help="a clone with a completed default run")
    parser.add_argument("--steps", type=int, nargs="+", default=[200, 300])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    repo = args.repo.resolve()
    start, where = time.perf_counter(), machine()
    default = load_params(repo / "params.yaml")
    rows = summarize(
        f"{default.cvae.common.steps} steps (REPO's default run)",
        repo / default.paths.eval_dir,
        list(default.cvae.seeds),
        None,
        default.base.screening,
    )
    for steps in args.steps:
        rows += measure(repo, steps, args.seeds)
    command = "python -m bench.steps_seeds REPO " + " ".join(
        ["--steps", *map(str, args.steps), "--seeds", *map(str, args.seeds)]
    )
    args.out.write_text(markdown(rows, command, (time.perf_counter() - start) / 60, where))
    print(args.out.read_text())


if __name__ == "__main__":
    main()
