"""The procedure's replicates: every base's runs of the contested variants, read from disk
(docs/method.md#claims-about-the-procedure).

The screening tier (every variant and rate on the screening base, `cvae.seeds`) gives the
seed-level tables and verdicts; the confirming tier (`cvae.confirm`'s variants and rates on every
other base) gives the replicates of the claims over bases (zgain.results.analysis.procedure).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from zgain.core.errors import DataError
from zgain.core.io import read_json
from zgain.core.runs import Tier
from zgain.params import Params
from zgain.results.load.runs import EvalResults, load_results
from zgain.results.registry import MISMATCH


@dataclass(frozen=True)
class BaseRuns:
    """One base: its tier, checkpoint sha256, test excess over the oracle (nats/seq) and its
    runs of the contested variants at each confirming rate."""

    seed: int
    tier: Tier
    sha256: str
    test_excess: float
    results: Mapping[float, EvalResults]
    mismatch: pd.DataFrame  # base_mismatch: b_t beside b*_t by position


def base_facts(meta_path: str | Path, base: int) -> tuple[str, float]:
    """(sha256, test excess in nats/seq; NaN without an oracle) from base `base`'s base.json."""
    path = Path(meta_path)
    if not path.is_file():
        raise DataError(f"{path} not found: run `dvc repro train_base@{base}`")
    meta = read_json(path)
    excess = meta.get("metrics", {}).get("test_excess_nats")
    return str(meta["sha256"]), math.nan if excess is None else float(excess)


def load_bases(params: Params) -> list[BaseRuns]:
    """Every base's runs of `cvae.confirm.variants` at `cvae.confirm.rates`, in base.seeds
    order: the screening base's from its screening groups, the others' from their confirming
    groups."""
    confirm, screening = params.cvae.confirm, params.base.screening
    out = []
    for seed in params.base.seeds:
        sha, excess = base_facts(params.paths.base(seed).base_meta, seed)
        first = seed == screening
        seeds = params.cvae.seeds if first else confirm.seeds
        tier = Tier.SCREENING if first else Tier.CONFIRMING
        results = {
            rate: load_results(
                params.paths.eval_dir,
                confirm.variants,
                seeds,
                rate,
                base=seed,
                tier=tier,
            )
            for rate in confirm.rates
        }
        mismatch = base_mismatch(params.paths.base(seed).surprisal_dir, seed)
        out.append(BaseRuns(seed, tier, sha, excess, results, mismatch))
    return out


def replicates(bases: Sequence[BaseRuns]) -> list[BaseRuns]:
    """The bases the claims over bases rest on: the confirming ones. The screening base chose
    the contested group and gives the exact-rate slopes, so it is not a replicate of the claims
    it shaped (docs/method.md#claims-about-the-procedure); tables/bases.csv still lists it."""
    return [base for base in bases if base.tier is Tier.CONFIRMING]


def comparisons(params: Params) -> list[tuple[str, str]]:
    """The comparisons over bases: each contested variant − the baseline, then the declared
    pairs whose two variants are both contested."""
    confirm, baseline = params.cvae.confirm.variants, params.report.baseline_variant
    pairs = [(v, baseline) for v in confirm if v != baseline and baseline in confirm]
    return pairs + [(a, b) for a, b in params.report.pairs if a in confirm and b in confirm]


TOKENS_FILE = "tokens.parquet"


def base_mismatch(surprisal_dir: str | Path, base: int) -> pd.DataFrame:
    """One base's rows of registry.MISMATCH: per target position of the test split, the token
    count and the means of b_t, b*_t and b_t − b*_t (nats); empty without a per-token oracle."""
    path = Path(surprisal_dir) / TOKENS_FILE
    if not path.is_file():
        raise DataError(f"{path} not found: run `dvc repro surprisal@{base}`")
    columns = ["position", "surprisal", "oracle_surprisal"]
    tokens = pd.read_parquet(path, columns=columns, filters=[("split", "==", "test")])
    if tokens.empty or tokens["oracle_surprisal"].isna().all():
        return MISMATCH.frame([])
    tokens = tokens.assign(mismatch=tokens["surprisal"] - tokens["oracle_surprisal"])
    grouped = tokens.groupby("position", sort=True)
    table = grouped[["surprisal", "oracle_surprisal", "mismatch"]].mean()
    table = table.rename(columns={"surprisal": "base_surprisal"})
    table.insert(0, "n_tokens", grouped.size())
    return table.reset_index().assign(base=base)[list(MISMATCH.columns)]


def mismatch_table(per_base: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """Every base's rows, in base order (empty when no base has a per-token oracle)."""
    frames = [frame for frame in per_base if not frame.empty]
    if not frames:
        return MISMATCH.frame([])
    return pd.concat(frames, ignore_index=True)
