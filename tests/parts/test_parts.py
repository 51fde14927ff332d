"""A study in parts: export, the refusals of parts that are not one study, and the claims over
bases of the combined runs against hand computations."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from scipy.stats import t as student_t
from typer.testing import CliRunner

from zgain.cli.app import app
from zgain.cli.parts import sigma_cells
from zgain.parts import record
from zgain.parts.over_bases import claims
from zgain.parts.record import Part, PartsError, check_parts, combine, export_part, load_part

PARAMS = {
    "paths": {"eval_dir": "data/eval"},
    "base": {"seeds": [0, 1, 2, 3]},
    "cvae": {
        "common": {"steps": 400},
        "confirm": {"bases": [1, 2, 3], "seeds": [0], "variants": ["token_mean", "mean_cc"],
                    "rates": [1.0]},
    },
    "report": {"confidence": 0.95, "baseline_variant": "token_mean",
               "equivalence": {"capture": 0.05, "marginal_gain": 0.02}},
}  # fmt: skip


def runs(bases, seeds, shift=0.0, md5="x") -> pd.DataFrame:
    rows = []
    for b in bases:
        for s in seeds:
            for v, value in (("token_mean", 0.7), ("mean_cc", 0.7 + 0.01 * b + 0.001 * s + shift)):
                rows.append({"base": b, "seed": s, "variant": v, "rate": 1.0, "md5": md5,
                             "capture": value, "marginal_gain": -value / 10})  # fmt: skip
    return pd.DataFrame(rows)


def part(name, bases, seeds, digest="d1", params=PARAMS, **kw) -> Part:
    return Part(name, digest, json.loads(json.dumps(params)), runs(bases, seeds, **kw))


def test_parts_of_one_study_combine_into_the_union_of_their_runs() -> None:
    combined = combine([part("p1", [1, 2], [0, 1]), part("p2", [2, 3], [0, 1])])
    assert len(combined) == 3 * 2 * 2  # base 2's runs once
    assert sorted(combined["base"].unique()) == [1, 2, 3]


def test_parts_of_other_code_are_refused() -> None:
    with pytest.raises(PartsError, match=r"p2: trained by other code \(digest d2\) than p1 \(d1\)"):
        check_parts([part("p1", [1], [0]), part("p2", [2], [0], digest="d2")])


def test_parts_of_other_params_are_refused_by_the_key_that_differs() -> None:
    other = json.loads(json.dumps(PARAMS))
    other["cvae"]["common"]["steps"] = 3000
    with pytest.raises(PartsError, match=r"p2: params differ from p1's at cvae.common.steps "):
        check_parts([part("p1", [1], [0]), part("p2", [2], [0], params=other)])


def test_only_the_replicate_lists_may_differ() -> None:
    other = json.loads(json.dumps(PARAMS))
    other["base"]["seeds"] = [0, 5]
    other["cvae"]["confirm"]["bases"] = [5]
    other["cvae"]["confirm"]["seeds"] = [0, 1, 2]
    check_parts([part("p1", [1], [0]), part("p2", [5], [0], params=other)])


def test_the_screening_lists_may_differ_but_not_the_confirming_rates() -> None:
    """No confirming stage reads cvae.rates or cvae.seeds (dvc.yaml), so a default that screens
    at fewer rates is still a part of the same study; its confirming rates are not."""
    screening = json.loads(json.dumps(PARAMS))
    screening["cvae"]["rates"], screening["cvae"]["seeds"] = [1.0], [0, 1]
    check_parts([part("p1", [1], [0]), part("p2", [2], [0], params=screening)])
    confirming = json.loads(json.dumps(PARAMS))
    confirming["cvae"]["confirm"]["rates"] = [2.0]
    with pytest.raises(PartsError, match=r"params differ from p1's at cvae.confirm.rates"):
        check_parts([part("p1", [1], [0]), part("p2", [2], [0], params=confirming)])


def test_no_confirming_stage_reads_the_screening_lists() -> None:
    """The claim behind PART_LISTS' last two entries, read from dvc.yaml itself."""
    stages = yaml.safe_load((Path(__file__).parents[2] / "dvc.yaml").read_text())["stages"]
    confirming = [s for name, s in stages.items() if name.startswith("confirm_")]
    assert len(confirming) == 2
    for stage in confirming:
        read = [p for p in stage["params"] if isinstance(p, str)]
        assert not {"cvae", "cvae.rates", "cvae.seeds"} & set(read), read


def test_parts_may_train_other_confirming_variants_and_combine_their_union() -> None:
    """A part that trains other variants on the same replicates joins the study: the claims
    compare every trained variant with the baseline where both ran (paired on base and seed)."""
    other = json.loads(json.dumps(PARAMS))
    other["cvae"]["confirm"]["variants"] = ["mean_ex"]
    extra = pd.DataFrame(
        [{"base": b, "seed": 0, "variant": "mean_ex", "rate": 1.0, "md5": "z",
          "capture": 0.6 + 0.01 * b, "marginal_gain": -0.06} for b in (1, 2, 3)]
    )  # fmt: skip
    first = part("p1", [1, 2, 3], [0, 1])
    second = Part("p2", "d1", other, extra)
    combined = combine([first, second])
    assert record.trained_variants([first, second]) == ["token_mean", "mean_cc", "mean_ex"]
    table = claims(combined, "token_mean", ["mean_cc", "mean_ex"], {"capture": 0.05}, 0.95)
    row = table.set_index("a").loc["mean_ex"]
    assert row["mean"] == pytest.approx(np.mean([0.6 + 0.01 * b - 0.7 for b in (1, 2, 3)]))
    assert (row["bases"], row["seeds"]) == (3, 1)  # token_mean's seed 1 has no mean_ex pair
    assert table.set_index("a").loc["mean_cc", "seeds"] == 2
    # the variants' definitions are not a part's choice
    other["cvae"]["variants"] = {"mean_ex": {"weights": {"mean": 2.0}}}
    with pytest.raises(PartsError, match=r"params differ from p1's at cvae.variants"):
        check_parts([first, Part("p2", "d1", other, extra)])


def test_a_shared_run_with_other_bytes_is_refused() -> None:
    with pytest.raises(PartsError, match="p2 and p1 both hold token_mean C = 1 seed 0 base 2"):
        check_parts([part("p1", [1, 2], [0]), part("p2", [2, 3], [0], md5="y")])


def test_claims_over_bases_by_hand() -> None:
    # mean_cc − token_mean on base b, seed s: 0.01 b + 0.001 s; bases 1..4, seeds 0, 1
    table = claims(runs([1, 2, 3, 4], [0, 1]), "token_mean", ["token_mean", "mean_cc"],
                   {"capture": 0.05}, 0.95)  # fmt: skip
    row = table.iloc[0]
    per_base = np.array([0.0105, 0.0205, 0.0305, 0.0405])
    half = student_t.ppf(0.975, 3) * per_base.std(ddof=1) / 2
    assert (row.a, row.b, row.bases, row.seeds) == ("mean_cc", "token_mean", 4, 2)
    assert row["mean"] == pytest.approx(0.0255)
    assert (row.low, row.high) == pytest.approx((0.0255 - half, 0.0255 + half))
    # seeds within a base differ by exactly 0.001: σ_W² = 0.001² / 2
    assert row.sigma_w == pytest.approx(0.001 / math.sqrt(2))
    # σ_B² = (MS_B − MS_W) / 2, MS_B = 2 var(per-base means)
    ms_b, ms_w = 2 * per_base.var(ddof=1), 0.001**2 / 2
    assert row.sigma_b == pytest.approx(math.sqrt((ms_b - ms_w) / 2))
    # the TOST interval (90%) lies inside ±0.05: equivalent, whatever the test against 0 says
    tost = student_t.ppf(0.95, 3) * per_base.std(ddof=1) / 2
    assert (row.tost_low, row.tost_high) == pytest.approx((0.0255 - tost, 0.0255 + tost))
    assert row.verdict == "equivalent"
    wide = claims(runs([1, 2, 3, 4], [0, 1]), "token_mean", ["mean_cc"], {"capture": 0.01}, 0.95)
    assert wide.iloc[0].verdict == "better"  # outside ±0.01, p < 0.05 over 4 bases


def test_combine_writes_claims_and_refuses_with_one_line(tmp_path: Path) -> None:
    for name, bases, digest in (("p1", [1, 2], "d1"), ("p2", [3, 4], "d1"), ("p3", [5], "d9")):
        folder = tmp_path / name
        folder.mkdir()
        p = part(name, bases, [0, 1], digest=digest)
        record_ = {"digest": digest, "params": p.params, "runs": p.runs.to_dict("records")}
        (folder / "part.json").write_text(json.dumps(record_))
    done = CliRunner().invoke(
        app, ["combine", str(tmp_path / "p1"), str(tmp_path / "p2"), "--out", str(tmp_path / "o")]
    )
    assert done.exit_code == 0, done.output
    table = pd.read_csv(tmp_path / "o" / "claims.csv")
    assert list(table["metric"]) == ["capture", "marginal_gain"]
    assert "| mean_cc − token_mean | capture |" in (tmp_path / "o" / "summary.md").read_text()
    assert (tmp_path / "o" / "forest.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "](forest.png)" in (tmp_path / "o" / "summary.md").read_text()
    assert not list((tmp_path / "o").glob(".*"))  # no temporary left behind
    refused = CliRunner().invoke(
        app, ["combine", str(tmp_path / "p1"), str(tmp_path / "p3"), "--out", str(tmp_path / "x")]
    )
    assert refused.exit_code == 2
    assert "error: p3: trained by other code (digest d9) than p1 (d1)" in refused.output
    assert not (tmp_path / "x").exists()  # nothing written


def test_export_reads_every_confirming_run(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(record, "training_digest", lambda root: "feed")
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(PARAMS))
    for base in (1, 2, 3):
        for variant in ("token_mean", "mean_cc"):
            folder = tmp_path / f"data/eval/base{base}/confirm-seed0/{variant}/rate1.0"
            folder.mkdir(parents=True)
            metrics = dict.fromkeys(record.METRICS, 0.5) | {"capture": base / 10}
            (folder / "metrics.json").write_text(json.dumps(metrics))
            (folder / "examples.parquet").write_bytes(f"{base}{variant}".encode())
    export_part(tmp_path, tmp_path / "part", {"seconds": 12.5})
    loaded = load_part(tmp_path / "part")
    assert loaded.digest == "feed" and len(loaded.runs) == 6
    assert loaded.runs.loc[loaded.runs["base"] == 3, "capture"].tolist() == [0.3, 0.3]
    with pytest.raises(PartsError, match="no part.json"):
        load_part(tmp_path)


def test_one_seed_per_base_gives_the_spread_of_base_values_not_two_components() -> None:
    table = claims(runs([1, 2, 3, 4], [0]), "token_mean", ["mean_cc"], {"capture": 0.05}, 0.95)
    row = table.iloc[0]
    # one seed: 0.01 b per base, its SD over bases 1..4 is 0.01 × SD(1, 2, 3, 4)
    assert row.sigma_b == pytest.approx(0.01 * np.std([1, 2, 3, 4], ddof=1))
    assert math.isnan(row.sigma_w)
    assert sigma_cells(row) == (f"{row.sigma_b:.3f} (B + W, 1 seed)", "—")
    two = claims(runs([1, 2, 3, 4], [0, 1]), "token_mean", ["mean_cc"], {"capture": 0.05}, 0.95)
    cells = sigma_cells(two.iloc[0])
    assert cells[1].startswith(f"{two.iloc[0].sigma_w:.3f} [") and "nan" not in "".join(cells)
