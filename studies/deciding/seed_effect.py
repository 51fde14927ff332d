"""Is a CVAE seed's effect shared by every base? A two-way (base × seed) ANOVA of each Δ.

    python -m studies.deciding.seed_effect reports/examples/deciding/runs.csv \
        --out studies/deciding/seed-effect.csv

Seed s fixes the CVAE's initialization, batch order and latent noise, and the seeds are
numbered alike on every base (0, 1), so one seed may push a difference the same way on every
base. The claims average each base's seeds and take the bases as replicates: a seed effect
shared by all bases is then a fixed part of every base's mean, outside the t-interval over
bases, so the verdicts hold for these seeds. This table measures it: for each contested
Δ (variant − baseline, per metric) the mean squares of bases, seeds and residual, and the F test
of the seed effect against the residual (base × seed interaction).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

METRICS = ("capture", "marginal_gain")


def seed_effect(diffs: pd.DataFrame) -> dict[str, float]:
    """Two-way ANOVA without replication of a (base × seed) table: mean squares of bases, seeds
    and residual, the seeds' F against the residual and its p-value, and each seed's mean."""
    values = diffs.to_numpy()
    b, k = values.shape
    grand = values.mean()
    ss_base = k * float(((values.mean(axis=1) - grand) ** 2).sum())
    ss_seed = b * float(((values.mean(axis=0) - grand) ** 2).sum())
    ss_res = float(((values - grand) ** 2).sum()) - ss_base - ss_seed
    df_base, df_seed, df_res = b - 1, k - 1, (b - 1) * (k - 1)
    ms_base, ms_seed, ms_res = ss_base / df_base, ss_seed / df_seed, ss_res / df_res
    f_seed = ms_seed / ms_res
    row = {"bases": b, "seeds": k, "ms_base": ms_base, "ms_seed": ms_seed, "ms_residual": ms_res,
           "f_seed": f_seed, "p_seed": float(stats.f.sf(f_seed, df_seed, df_res))}  # fmt: skip
    means = values.mean(axis=0)
    return row | {f"mean_seed_{s}": float(m) for s, m in zip(diffs.columns, means, strict=True)}


def table(runs: pd.DataFrame, baseline: str) -> pd.DataFrame:
    """One row per (variant, metric) of the variants trained on every (base, seed)."""
    rows = []
    for metric in METRICS:
        wide = runs.pivot_table(index=["base", "seed"], columns="variant", values=metric)
        for a in [v for v in wide.columns if v != baseline]:
            diffs = (wide[a] - wide[baseline]).unstack("seed")
            if diffs.isna().any().any() or diffs.shape[1] < 2:
                continue
            rows.append({"a": a, "b": baseline, "metric": metric} | seed_effect(diffs))
    return pd.DataFrame(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", type=Path, help="runs.csv written by zgain combine")
    parser.add_argument("--baseline", default="token_mean")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    result = table(pd.read_csv(args.runs), args.baseline)
    result.to_csv(args.out, index=False)
    with pd.option_context("display.width", 200, "display.precision", 4):
        print(result)


if __name__ == "__main__":
    np.seterr(all="raise")
    main()
