"""studies.same_base: its comparison of per-rate tables, counts and headline ranking."""

from __future__ import annotations

import pytest

from studies.same_base.same_base import TODAY_BASE_OUT, count_table, counts, md5_at, ranking
from zgain.cli.check import compare_tables

HEADER = "variant,metric,mean,low,high,n,kind,source,adjusted_mean,adjusted_low,adjusted_high\n"


def table(*rows: str) -> str:
    return HEADER + "".join(row + "\n" for row in rows)


REFERENCE = {
    "decomposition_rate0.5.csv": table(
        "base,capture,0.0,,,0,definition,definition,,,",
        "token_mean,capture,0.50,0.40,0.60,3,seeds,eval,0.50,0.40,0.60",
        "mean_tok,capture,0.55,0.50,0.60,3,seeds,eval,0.55,0.50,0.60",
    ),
    "decomposition_rate1.0.csv": table(
        "token_mean,z_information,0.80,0.70,0.90,3,seeds,eval,0.81,0.70,0.90",
    ),
    "decomposition_rate2.0.csv": table(
        "token_mean,capture,0.90,0.80,1.00,3,seeds,eval,0.90,0.80,1.00",
    ),
}
FRESH = {
    "decomposition_rate0.5.csv": table(
        "base,capture,0.0,,,0,definition,definition,,,",
        "token_mean,capture,0.45,0.30,0.60,3,seeds,eval,0.70,0.30,0.60",  # inside
        "mean_tok,capture,0.61,0.55,0.67,3,seeds,eval,0.61,0.55,0.67",  # outside: 0.61 > 0.60
    ),
    "decomposition_rate1.0.csv": table(
        "token_mean,z_information,0.70,0.60,0.80,3,seeds,eval,0.70,0.60,0.80",  # on the edge
        "mean_tok,z_information,0.10,0.00,0.20,3,seeds,eval,0.10,0.00,0.20",  # no reference
    ),
}


def test_fresh_means_are_counted_against_the_reference_intervals_of_shared_tables() -> None:
    found = compare_tables(FRESH, REFERENCE, 0.95)
    # the base row (no interval), the unmatched row and the table only in REFERENCE drop out
    assert [(v.table, v.variant, v.metric, v.inside) for v in found] == [
        ("decomposition_rate0.5.csv", "token_mean", "capture", True),
        ("decomposition_rate0.5.csv", "mean_tok", "capture", False),
        ("decomposition_rate1.0.csv", "token_mean", "z_information", True),
    ]
    # the raw seed mean is compared, not the adjusted one (0.70 for token_mean would be outside)
    assert found[0].fresh == pytest.approx(0.45)
    cells = counts(found)
    # each of the 3 metrics has n = 3 on both sides: 0.906820 expected inside (tests/cli)
    assert cells == {
        "decomposition_rate0.5.csv": "1/2",
        "decomposition_rate1.0.csv": "1/1",
        "all": "2/3 (expected 2.7)",
    }
    text = count_table({"fresh vs reference": cells})
    assert text.splitlines()[0] == "| tables against intervals | rate0.5 | rate1.0 | all |"
    assert text.splitlines()[2] == "| fresh vs reference | 1/2 | 1/1 | 2/3 (expected 2.7) |"


def test_ranking_orders_the_adjusted_captures_best_first() -> None:
    text = table(
        "base,capture,0.0,,,0,definition,definition,,,",
        "token_mean,capture,0.60,0.5,0.7,3,seeds,eval,0.612,0.5,0.7",
        "mean_tok,capture,0.70,0.6,0.8,3,seeds,eval,0.5249,0.4,0.6",
        "token_sum,capture,0.10,0.0,0.2,3,seeds,eval,0.7,0.6,0.8",
        "token_sum,kl,1.0,0.9,1.1,3,seeds,eval,1.0,0.9,1.1",
    )
    assert ranking(text) == "token_sum 0.700, token_mean 0.612, mean_tok 0.525"


def test_md5_at_reads_the_committed_dvc_lock() -> None:
    assert md5_at("HEAD", "no/such/output") == "none recorded"
    recorded = md5_at("HEAD", TODAY_BASE_OUT)  # a directory output: `<md5>.dir`
    digest, _, kind = recorded.partition(".")
    assert len(digest) == 32 and int(digest, 16) >= 0 and kind == "dir"
