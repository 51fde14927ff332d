"""What `check_params` says beyond the schema (`zgain.preflight`): each own-data mistake is one
line that names its own key, before any stage runs and without touching data/."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import yaml
from pairs_data import pairs_params, toy_pairs, write_toy_pairs

from stages.check_params import problems
from zgain.preflight import probe_split_lines


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # pairs files lie under paths.pairs_dir (`pairs`), relative to the repository, as in use
    monkeypatch.chdir(tmp_path)


def lines_for(tmp_path: Path, raw: dict) -> list[str]:
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    return problems(path)[1]


def with_data(default_params_raw: dict, data: dict, *, small_batches: bool = True) -> dict:
    """The params with `data` as their data block; for a pairs block, with batches the toy
    file's splits fill (the tiny profile's sizes, as in the end-to-end pairs project)."""
    raw = {**default_params_raw, "data": data}
    if data.get("source") == "pairs" and small_batches:
        raw["base"] = {**raw["base"], "batch_size": 64}
        common = {**raw["cvae"]["common"], "batch_size": 64, "val_examples": 32}
        raw["cvae"] = {**raw["cvae"], "common": common}
    return raw


def test_the_committed_params_pass(tmp_path: Path, default_params_raw: dict) -> None:
    assert lines_for(tmp_path, default_params_raw) == []


def test_a_pairs_file_with_every_named_column_passes(
    tmp_path: Path, default_params_raw: dict
) -> None:
    file = write_toy_pairs(Path("pairs/toy.tsv"))
    raw = with_data(default_params_raw, pairs_params(str(file), oracle=True))
    assert lines_for(tmp_path, raw) == []


def test_a_missing_column_is_named_with_its_key_and_the_file(
    tmp_path: Path, default_params_raw: dict
) -> None:
    file = Path("pairs/mine.tsv")
    file.parent.mkdir()
    file.write_text("x\tz\nab\tba\n")
    before = sorted(tmp_path.rglob("*"))
    data = {**pairs_params(str(file), oracle=False), "x_column": "x", "y_column": "y"}
    assert lines_for(tmp_path, with_data(default_params_raw, data)) == [
        f"data.y_column: {file} has no column 'y' (its columns: x, z)"
    ]
    assert sorted(tmp_path.rglob("*")) == [*before, tmp_path / "params.yaml"]  # nothing written


def test_a_missing_oracle_column_names_the_oracle_key(
    tmp_path: Path, default_params_raw: dict
) -> None:
    file = Path("pairs/toy.parquet")
    file.parent.mkdir()
    toy_pairs().drop(columns=["info"]).to_parquet(file)
    data = {**pairs_params(str(file), oracle=True)}
    assert lines_for(tmp_path, with_data(default_params_raw, data)) == [
        f"data.oracle.info: {file} has no column 'info' (its columns: word, pron, nll)"
    ]


def test_a_parquet_column_of_the_wrong_kind_is_named(
    tmp_path: Path, default_params_raw: dict
) -> None:
    file = Path("pairs/ids.parquet")
    file.parent.mkdir()
    pd.DataFrame({"word": [[1, 2], [3]], "pron": ["a", "b"], "nll": [[0.0], [0.0]]}).to_parquet(
        file
    )
    data = {**pairs_params(str(file), oracle=False), "oracle": {"nll": "nll", "info": "pron"}}
    lines = lines_for(tmp_path, with_data(default_params_raw, data))
    assert lines == [
        f"data.x_column: column 'word' of {file} must hold text, got list of integers",
        f"data.oracle.nll: column 'nll' of {file} must hold numbers or text, got list<element: "
        "double>",
    ]


def test_a_small_test_split_blames_data_n_test(tmp_path: Path, default_params_raw: dict) -> None:
    raw = default_params_raw
    raw["data"]["n_test"] = 10
    fraction = raw["evaluate"]["probe_test_fraction"]
    strategies = len(raw["data"]["transforms"])
    assert (fraction, strategies) == (0.3, 4)
    assert lines_for(tmp_path, raw) == [
        "data.n_test: the probe holds out 0.3 of the 10 test examples and needs >= 4 (one per "
        "strategy) on each side: needs data.n_test >= 11 or a fraction in (0.3, 0.6], got 10"
    ]
    raw["data"]["n_test"] = 11  # the size it names passes
    assert lines_for(tmp_path, raw) == []


def test_an_unusual_share_is_blamed_itself(tmp_path: Path, default_params_raw: dict) -> None:
    raw = default_params_raw
    raw["evaluate"]["probe_test_fraction"] = 0.999
    [line] = lines_for(tmp_path, raw)
    assert line.startswith("evaluate.probe_test_fraction: the probe holds out 0.999 of the 2000")
    assert line.endswith("needs data.n_test >= 4000 or a fraction in (0.0015, 0.998], got 0.999")


def test_a_probe_line_it_does_not_know_passes_unchanged() -> None:
    assert probe_split_lines(["evaluate.probe_test_fraction: other, got 2"]) == [
        "evaluate.probe_test_fraction: other, got 2"
    ]


def test_switching_only_the_source_gives_one_hint(tmp_path: Path, default_params_raw: dict) -> None:
    raw = default_params_raw
    raw["data"]["source"] = "pairs"
    assert lines_for(tmp_path, raw) == [
        "data.source: pairs takes its own data block, and this one still holds the keys of the "
        "synthetic world: replace the whole block (the pairs block: docs/own-data.md#the-params)",
        "data: remove decoy_noise, decoy_positions, length_max and 10 more; add file, tokenizer, "
        "max_x_len, max_y_len, val_fraction, test_fraction",
    ]


def test_switching_back_to_synthetic_gives_the_same_hint(
    tmp_path: Path, default_params_raw: dict
) -> None:
    data = {**pairs_params("pairs/toy.tsv", oracle=False), "source": "synthetic"}
    lines = lines_for(tmp_path, with_data(default_params_raw, data))
    assert lines[0].startswith("data.source: synthetic takes its own data block")
    assert lines[0].endswith("(the synthetic block: docs/method.md#the-synthetic-world)")
    assert lines[1].startswith("data: remove file, max_x_len, max_y_len and 8 more; add vocab_size")
    assert len(lines) == 2


def test_a_pairs_block_with_a_real_mistake_keeps_its_own_line(
    tmp_path: Path, default_params_raw: dict
) -> None:
    """Only a switched block is summarized: a pairs block's own typo stays one line."""
    file = write_toy_pairs(Path("pairs/toy.tsv"))
    data = {**pairs_params(str(file), oracle=False), "tokeniser": "char"}
    [line] = lines_for(tmp_path, with_data(default_params_raw, data))
    assert line.startswith("data.tokeniser: unknown key (known: file, format, key_column")


def test_a_pairs_file_too_small_to_split_names_its_rows_splits_and_minimum(
    tmp_path: Path, default_params_raw: dict
) -> None:
    """Three rows pass the header check, and `generate` would fail on an empty split: the
    refusal comes before any stage, with the file's numbers."""
    file = Path("pairs/three.tsv")
    toy_pairs().head(3).to_csv(write_toy_pairs(file), sep="\t", index=False)
    raw = with_data(default_params_raw, pairs_params(str(file), oracle=True))
    assert lines_for(tmp_path, raw) == [
        f"data.file: {file} has 3 rows (3 distinct keys), split train 1, val 1, test 1 by "
        "data.val_fraction 0.2 and data.test_fraction 0.25; too small to train or test on: "
        "train 1 < 64 (base.batch_size), val 1 < 32 (cvae.common.val_examples), test 1 < 2 "
        "(intervals over examples) (more rows, or other fractions)"
    ]


def test_a_split_smaller_than_a_batch_names_the_key_that_sets_its_minimum(
    tmp_path: Path, default_params_raw: dict
) -> None:
    """The default batches (base 256, CVAE validation 256 examples) are larger than the toy
    file's train and validation splits: refused here, where `generate` would stop."""
    file = write_toy_pairs(Path("pairs/toy.tsv"))
    data = pairs_params(str(file), oracle=True)
    [line] = lines_for(tmp_path, with_data(default_params_raw, data, small_batches=False))
    assert line.startswith(f"data.file: {file} has 311 rows (240 distinct keys), split train")
    assert "train 165 < 256 (base.batch_size), val 67 < 256 (cvae.common.val_examples)" in line


def test_the_split_sizes_are_generates_own(default_params_raw: dict) -> None:
    from types import SimpleNamespace

    from zgain.params import parse_params
    from zgain.preflight import split_sizes
    from zgain.world.pairs import split_rows

    frame = toy_pairs()
    data = parse_params(
        with_data(default_params_raw, pairs_params("pairs/toy.tsv", oracle=True))
    ).data
    rows = split_rows(SimpleNamespace(keys=frame["word"].to_numpy()), data)
    assert split_sizes(frame["word"].tolist(), data) == {k: len(v) for k, v in rows.items()}


def test_an_even_number_of_rates_without_an_oracle_is_refused(
    tmp_path: Path, default_params_raw: dict
) -> None:
    file = write_toy_pairs(Path("pairs/toy.tsv"))
    raw = with_data(default_params_raw, pairs_params(str(file), oracle=False))
    raw["cvae"]["rates"] = [0.25, 0.5, 1.0, 2.0]
    assert lines_for(tmp_path, raw) == [
        "cvae.rates: 4 rates (0.25, 0.5, 1, 2) and no oracle (data.oracle: null): the headline "
        "rate is the middle rate, and an even number has two (0.5 and 1); list an odd number "
        "of rates, the headline in the middle, got 4"
    ]
    raw["cvae"]["rates"] = [0.25, 0.5, 1.0]  # an odd number passes
    assert lines_for(tmp_path, raw) == []
    oracle = with_data(default_params_raw, pairs_params(str(file), oracle=True))
    oracle["cvae"]["rates"] = [0.25, 0.5, 1.0, 2.0]  # the oracle's I* chooses the headline
    assert lines_for(tmp_path, oracle) == []
