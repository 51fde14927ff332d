"""A small pairs file with a known answer, for the tests of `data.source: pairs`.

Each word x (3–5 letters of a 6-letter alphabet) is listed with one y, or with two equally
likely ones (x itself and x reversed) for a third of the words: −log p(y|x) = log n_w is then an
exact oracle, and so is I* = log n_w (given which listing is meant, y is certain).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

ALPHABET = "abcdef"


def toy_pairs(n_words: int = 240, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    words: set[str] = set()
    while len(words) < n_words:
        length = int(rng.integers(3, 6))
        words.add("".join(rng.choice(list(ALPHABET), size=length)))
    rows = []
    for i, word in enumerate(sorted(words)):
        listed = [word, word[::-1]] if i % 3 == 0 and word != word[::-1] else [word.upper()]
        for y in listed:
            n = len(listed)
            rows.append(
                {"word": word, "pron": " ".join(y), "nll": math.log(n), "info": math.log(n)}
            )
    return pd.DataFrame(rows)


def pairs_params(file: str, *, oracle: bool) -> dict:
    """The `data` block that reads `toy_pairs` written as TSV to `file`."""
    return {
        "source": "pairs",
        "file": file,
        "x_column": "word",
        "y_column": "pron",
        "tokenizer": "char",
        "y_tokenizer": "whitespace",
        "max_x_len": 8,
        "max_y_len": 8,
        "seed": 0,
        "val_fraction": 0.2,
        "test_fraction": 0.25,
        "oracle": {"nll": "nll", "info": "info"} if oracle else None,
    }


def write_toy_pairs(path: Path, **kw) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    toy_pairs(**kw).to_csv(path, sep="\t", index=False)
    return path
