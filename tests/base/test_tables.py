"""The checked reader of the surprisal tables, on small hand-made tables and their faults."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from zgain.base.schema import EXAMPLES_SCHEMA, TOKENS_SCHEMA
from zgain.base.tables import first_repeat, read_surprisal_tables
from zgain.core.errors import DataError
from zgain.core.io import BASE_SHA_KEY, table_metadata, write_table

SHA = "ab" * 32
# Two examples: id 10 (train, T = 2) and id 11 (val, T = 3); b_t in nats.
SURPRISAL = {10: [0.5, 1.0], 11: [0.25, 0.25, 2.0]}
SPLIT = {10: "train", 11: "val"}


def token_rows() -> dict[str, list]:
    rows: dict[str, list] = {name: [] for name in TOKENS_SCHEMA.names}
    for example_id, values in SURPRISAL.items():
        for position, value in enumerate(values):
            rows["example_id"].append(example_id)
            rows["split"].append(SPLIT[example_id])
            rows["position"].append(position)
            rows["token"].append(position + 1)
            rows["surprisal"].append(value)
            rows["oracle_surprisal"].append(value / 2)
    return rows


def example_rows() -> dict[str, list]:
    rows: dict[str, list] = {name: [] for name in EXAMPLES_SCHEMA.names}
    for example_id, values in SURPRISAL.items():
        total = sum(values)
        rows["example_id"].append(example_id)
        rows["split"].append(SPLIT[example_id])
        rows["n_tokens"].append(len(values))
        rows["surprisal_sum"].append(total)
        rows["surprisal_mean"].append(total / len(values))
        rows["concentration"].append(sum((v / total) ** 2 for v in values))
        rows["oracle_nll"].append(total / 2)
        rows["oracle_nll_given_s"].append(total / 4)
        rows["oracle_info"].append(total / 4)
        rows["strategy"].append(0)
    return rows


def write_pair(
    directory: Path,
    tokens: dict[str, list] | None = None,
    examples: dict[str, list] | None = None,
    *,
    tokens_sha: str | None = SHA,
    examples_sha: str | None = SHA,
) -> Path:
    """Write tokens.parquet and examples.parquet (valid unless edited) into `directory`."""
    for name, rows, schema, sha in (
        ("tokens.parquet", tokens or token_rows(), TOKENS_SCHEMA, tokens_sha),
        ("examples.parquet", examples or example_rows(), EXAMPLES_SCHEMA, examples_sha),
    ):
        metadata = {BASE_SHA_KEY: sha} if sha else {}
        write_table(pa.table(rows).cast(schema), directory / name, schema, metadata)
    return directory


def refused(directory: Path, file: str, *fragments: str) -> str:
    """The reader's DataError message; it names `file` and contains every fragment."""
    with pytest.raises(DataError) as err:
        read_surprisal_tables(directory)
    message = str(err.value)
    assert "\n" not in message
    assert str(directory / file) in message, message
    for fragment in fragments:
        assert fragment in message, message
    return message


def test_a_consistent_pair_is_read_with_its_sha(tmp_path):
    tables = read_surprisal_tables(write_pair(tmp_path))
    assert tables.base_sha256 == SHA
    assert tables.tokens.num_rows == 5 and tables.examples.num_rows == 2
    assert tables.tokens_path == tmp_path / "tokens.parquet"
    assert table_metadata(tables.examples) == {BASE_SHA_KEY: SHA}


@pytest.mark.parametrize("value", [math.nan, -0.5, math.inf])
@pytest.mark.parametrize(
    "column", ["surprisal_sum", "surprisal_mean", "concentration", "oracle_nll", "oracle_info"]
)
def test_a_bad_examples_value_is_refused_naming_column_and_example(tmp_path, column, value):
    examples = example_rows()
    examples[column][1] = value
    refused(write_pair(tmp_path, examples=examples), "examples.parquet", f"{column} of example 11")


@pytest.mark.parametrize("value", [math.nan, -0.5, -math.inf])
@pytest.mark.parametrize("column", ["surprisal", "oracle_surprisal"])
def test_a_bad_token_value_is_refused(tmp_path, column, value):
    tokens = token_rows()
    tokens[column][3] = value
    refused(write_pair(tmp_path, tokens=tokens), "tokens.parquet", f"{column} of example 11")


def test_oracle_values_may_round_below_zero_by_a_hair(tmp_path):
    examples = example_rows()
    examples["oracle_info"][0] = -1e-15  # I* = nll − nll_given_s of two equal sums
    read_surprisal_tables(write_pair(tmp_path, examples=examples))


def test_a_truncated_tokens_file_is_a_data_error_naming_it(tmp_path):
    write_pair(tmp_path)
    path = tmp_path / "tokens.parquet"
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    refused(tmp_path, "tokens.parquet", "not a readable Parquet file")
    with pytest.raises(DataError, match=str(path)):
        table_metadata(path)


def test_a_missing_table_is_named(tmp_path):
    write_pair(tmp_path)
    (tmp_path / "examples.parquet").unlink()
    refused(tmp_path, "examples.parquet", "file not found")


def test_a_missing_token_row_is_refused_naming_both_files(tmp_path):
    tokens = {name: values[:-1] for name, values in token_rows().items()}
    message = refused(write_pair(tmp_path, tokens=tokens), "tokens.parquet", "example 11")
    assert "2 token rows" in message and "n_tokens 3" in message
    assert str(tmp_path / "examples.parquet") in message


def test_tokens_of_an_unknown_example_are_refused(tmp_path):
    tokens = token_rows()
    tokens["example_id"][-1] = 99
    refused(write_pair(tmp_path, tokens=tokens), "tokens.parquet", "example 99 is not in")


def test_a_repeated_example_is_refused(tmp_path):
    examples = {name: values + values[-1:] for name, values in example_rows().items()}
    refused(write_pair(tmp_path, examples=examples), "examples.parquet", "example 11 appears")


def test_a_repeated_position_is_refused(tmp_path):
    tokens = token_rows()
    tokens["position"][4] = 1  # example 11 now has positions 0, 1, 1
    refused(write_pair(tmp_path, tokens=tokens), "tokens.parquet", "positions of example 11")


def test_a_split_disagreement_is_refused(tmp_path):
    tokens = token_rows()
    tokens["split"][0] = "test"
    refused(write_pair(tmp_path, tokens=tokens), "tokens.parquet", "example 10 is in split test")


@pytest.mark.parametrize("column", ["surprisal_sum", "surprisal_mean"])
def test_a_sum_that_is_not_the_tokens_sum_is_refused(tmp_path, column):
    examples = example_rows()
    examples[column][0] += 1e-3
    refused(write_pair(tmp_path, examples=examples), "examples.parquet", f"{column} of example 10")


def test_float32_rounding_of_the_token_values_is_accepted(tmp_path):
    tokens = token_rows()
    tokens["surprisal"] = [float(np.float32(v + 1e-7)) for v in tokens["surprisal"]]
    read_surprisal_tables(write_pair(tmp_path, tokens=tokens))


@pytest.mark.parametrize(
    ("tokens_sha", "examples_sha", "file", "fragment"),
    [
        (None, SHA, "tokens.parquet", BASE_SHA_KEY),
        (SHA, None, "examples.parquet", BASE_SHA_KEY),
        (SHA, "cd" * 32, "examples.parquet", "different base checkpoints"),
    ],
)
def test_both_tables_must_record_one_base(tmp_path, tokens_sha, examples_sha, file, fragment):
    write_pair(tmp_path, tokens_sha=tokens_sha, examples_sha=examples_sha)
    refused(tmp_path, file, fragment)


@pytest.mark.parametrize(
    ("values", "expected"),
    [([3, 1, 2], None), ([5], None), ([4, 7, 4, 7], 2), ([9, 1, 1, 9], 2), ([2, 8, 5, 8, 2], 3)],
)
def test_first_repeat_is_the_first_index_equal_to_an_earlier_one(values, expected):
    assert first_repeat(np.array(values)) == expected
