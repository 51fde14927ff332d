"""`data.source: pairs`: reading, tokenizing, splitting by key, the oracle columns, and one
line naming the file for each kind of bad file, with nothing written."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from conftest import REPO_ROOT, tiny_params_raw
from pairs_data import pairs_params, toy_pairs, write_toy_pairs

from stages.generate import run_pairs
from zgain.core.errors import DataError
from zgain.core.io import read_table
from zgain.params import PairsParams, parse_params
from zgain.params.profile import merge
from zgain.world.frames import read_frames
from zgain.world.pairs import read_pairs, split_rows
from zgain.world.splits import SPLITS, SYNTHETIC_SCHEMA, load_split


def data_params(file: Path, **overrides) -> PairsParams:
    return PairsParams.model_validate({**pairs_params(str(file), oracle=True), **overrides})


def params_for(root: Path, file: str, **overrides):
    raw = tiny_params_raw()
    raw["paths"] = {**raw["paths"], "pairs_dir": str(root), "synthetic_dir": str(root / "out")}
    raw["data"] = {**pairs_params(file, oracle=True), **overrides}
    return parse_params(raw)


@pytest.fixture
def toy_file(tmp_path: Path) -> Path:
    return write_toy_pairs(tmp_path / "toy.tsv")


def test_tokens_are_one_sorted_vocabulary_for_x_and_y(toy_file: Path) -> None:
    pairs = read_pairs(data_params(toy_file))
    frame = toy_pairs()
    assert pairs.tokens == tuple(sorted(set("abcdef") | set("ABCDEF")))
    index = {t: i for i, t in enumerate(pairs.tokens)}
    row = 3
    assert pairs.x[row].tolist() == [index[c] for c in frame["word"][row]]
    assert pairs.y[row].tolist() == [index[c] for c in frame["pron"][row].split()]
    np.testing.assert_array_equal(pairs.oracle_info, frame["info"].to_numpy())


def test_one_key_never_sits_in_two_splits(toy_file: Path) -> None:
    data = data_params(toy_file)
    pairs = read_pairs(data)
    rows = split_rows(pairs, data)
    keys = {split: set(pairs.keys[chosen]) for split, chosen in rows.items()}
    assert not (
        keys["train"] & keys["val"] or keys["train"] & keys["test"] or keys["val"] & keys["test"]
    )
    assert sum(len(r) for r in rows.values()) == len(pairs.keys)
    n_keys = len(set(pairs.keys))
    assert len(keys["test"]) == round(data.test_fraction * n_keys)
    # seeded: the same seed gives the same split, another seed another one
    again = split_rows(pairs, data)
    assert all(np.array_equal(rows[s], again[s]) for s in SPLITS)
    other = split_rows(pairs, data.model_copy(update={"seed": 1}))
    assert not np.array_equal(rows["test"], other["test"])


def test_generate_writes_splits_that_load_in_the_frames(tmp_path: Path, toy_file: Path) -> None:
    params = params_for(tmp_path, str(toy_file))
    sizes = run_pairs(params, tmp_path / "out")
    frames = read_frames(tmp_path / "out")
    assert (frames.max_x_len, frames.max_y_len, frames.n_content) == (8, 8, 12)
    total = 0
    for split in SPLITS:
        table = read_table(tmp_path / "out" / f"{split}.parquet", SYNTHETIC_SCHEMA)
        loaded = load_split(tmp_path / "out" / f"{split}.parquet", frames)
        assert len(loaded) == sizes[split] == table.num_rows
        assert (loaded.strategy == -1).all() and loaded.strategy_prior.shape == (len(loaded), 0)
        supervised = np.arange(frames.n_targets)[None, :] <= loaded.y_len[:, None]
        assert np.isnan(loaded.oracle_token_info[supervised]).all()
        # I* = nll − nll_given_s, as in the synthetic tables
        np.testing.assert_allclose(
            loaded.oracle_nll - loaded.oracle_nll_given_s, loaded.oracle_info
        )
        total += table.num_rows
    assert total == len(toy_pairs())


def test_without_oracle_columns_the_oracle_is_nan(toy_file: Path) -> None:
    pairs = read_pairs(data_params(toy_file, oracle=None))
    assert np.isnan(pairs.oracle_nll).all() and np.isnan(pairs.oracle_info).all()


def test_truncate_cuts_and_counts(tmp_path: Path, toy_file: Path) -> None:
    pairs = read_pairs(data_params(toy_file, max_x_len=4, max_y_len=3, truncate=True))
    frame = toy_pairs()
    assert pairs.truncated == {
        "x": int((frame["word"].str.len() > 4).sum()),
        "y": int((frame["pron"].str.split().str.len() > 3).sum()),
    }
    assert max(len(r) for r in pairs.x) == 4 and max(len(r) for r in pairs.y) == 3


def test_ids_tokenizer_reads_lists_of_ids(tmp_path: Path) -> None:
    path = tmp_path / "ids.parquet"
    pd.DataFrame({"x": [[0, 1], [2]], "y": [[1, 1, 0], [3]]}).to_parquet(path)
    pairs = read_pairs(
        data_params(path, tokenizer="ids", y_tokenizer=None, vocab_size=4, x_column="x",
                    y_column="y", oracle=None)
    )  # fmt: skip
    assert [r.tolist() for r in pairs.x] == [[0, 1], [2]]
    assert pairs.tokens == ("0", "1", "2", "3")


BAD_FILES = {
    "missing column": ("word\tother\nab\tA B\n", {}, "missing column 'pron'"),
    "empty sequence": ("word\tpron\tnll\tinfo\nab\t\t0\t0\n", {}, "row 0: empty y sequence"),
    "too long": (
        "word\tpron\tnll\tinfo\nabcdefabc\tA\t0\t0\n",
        {},
        "row 0: x has 9 tokens, more than data.max_x_len (8)",
    ),
    "unknown token": (
        "x\ty\n0 1\t2 9\n",
        {
            "tokenizer": "ids",
            "y_tokenizer": None,
            "vocab_size": 4,
            "x_column": "x",
            "y_column": "y",
            "oracle": None,
        },
        "row 0, column 'y': unknown token id 9",
    ),  # fmt: skip
    "bad oracle": (
        "word\tpron\tnll\tinfo\nab\tA B\tlots\t0\n",
        {},
        "oracle column 'nll': must be a finite number >= 0",
    ),
    "info above nll": ("word\tpron\tnll\tinfo\nab\tA B\t0.1\t0.5\n", {}, "exceeds oracle nll"),
    "empty split": ("word\tpron\tnll\tinfo\nab\tA B\t0\t0\n", {}, "split has no examples"),
    "no rows": ("word\tpron\tnll\tinfo\n", {}, "no rows"),
}


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_a_bad_file_is_one_line_naming_it_and_nothing_is_written(tmp_path: Path, case: str) -> None:
    text, overrides, message = BAD_FILES[case]
    path = tmp_path / "bad.tsv"
    path.write_text(text)
    params = params_for(tmp_path, str(path), **overrides)
    with pytest.raises(DataError) as err:
        run_pairs(params, tmp_path / "out")
    line = str(err.value)
    assert "\n" not in line and line.startswith(str(path)) and message in line, line
    assert not (tmp_path / "out").exists()


def test_the_stage_prints_one_line_and_no_traceback(tmp_path: Path) -> None:
    (tmp_path / "pairs").mkdir()
    (tmp_path / "pairs" / "bad.tsv").write_text("word\tpron\nab\t\n")
    raw = merge(tiny_params_raw(), {"data": {**pairs_params("pairs/bad.tsv", oracle=False)}})
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(raw))
    done = subprocess.run(
        [sys.executable, "-m", "stages.generate"],
        cwd=tmp_path,
        env={"PYTHONPATH": f"{REPO_ROOT / 'src'}:{REPO_ROOT}", "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == ["error: pairs/bad.tsv: row 0: empty y sequence"], (
        done.stderr
    )
    assert not (tmp_path / "data").exists()


def test_params_reject_a_file_outside_the_pairs_folder(tmp_path: Path) -> None:
    raw = tiny_params_raw()
    raw["data"] = pairs_params("elsewhere/toy.tsv", oracle=False)
    with pytest.raises(ValueError, match=r"data.file: must lie under paths.pairs_dir \(pairs\)"):
        parse_params(raw)


def test_params_check_tokenizers_and_fractions() -> None:
    raw = tiny_params_raw()
    raw["data"] = {**pairs_params("pairs/toy.tsv", oracle=False), "tokenizer": "ids"}
    with pytest.raises(ValueError) as err:
        parse_params(raw)
    assert "data.y_tokenizer: ids cannot be mixed with a text tokenizer" in str(err.value)
    raw["data"] = {**pairs_params("pairs/toy.tsv", oracle=False), "val_fraction": 0.6,
                   "test_fraction": 0.5}  # fmt: skip
    with pytest.raises(ValueError, match="data.test_fraction: must leave a train split"):
        parse_params(raw)


def test_log_n_oracle_of_the_toy_file() -> None:
    frame = toy_pairs()
    counts = frame.groupby("word")["pron"].transform("count")
    np.testing.assert_allclose(frame["info"], np.log(counts))
    assert math.isclose(frame["nll"].max(), math.log(2))


def test_check_params_names_a_missing_or_unreadable_pairs_file(
    tmp_path: Path, toy_file, monkeypatch: pytest.MonkeyPatch
) -> None:
    from stages.check_params import pairs_file_errors

    # the split sizes are checked against the batches of params.yaml in the working directory
    # (the file the stage validates): the tiny profile's, which the toy file's splits fill
    monkeypatch.chdir(tmp_path)
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(tiny_params_raw()))
    assert pairs_file_errors(params_for(tmp_path, str(toy_file))) == []
    missing = tmp_path / "gone.tsv"
    assert pairs_file_errors(params_for(tmp_path, str(missing))) == [
        f"data.file: {missing} not found (no such file under paths.pairs_dir)"
    ]
    folder = tmp_path / "folder.tsv"
    folder.mkdir()
    assert pairs_file_errors(params_for(tmp_path, str(folder))) == [
        f"data.file: {folder} not found (no such file under paths.pairs_dir)"
    ]
