"""The `data` block: where the pairs come from (docs/method.md#the-synthetic-world,
docs/own-data.md). `source: synthetic` (the default) generates the world with its exact oracle;
`source: pairs` reads the user's own (x, y) pairs from a file under `paths.pairs_dir`."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Discriminator, StrictBool, StrictInt, StrictStr, Tag, model_validator

from zgain.params.fields import (
    Block,
    NonNegativeInt,
    OpenUnit,
    PositiveFloat,
    PositiveInt,
    Probability,
    fail,
    raise_all,
    rule,
)
from zgain.world.transforms import TRANSFORMS, longest_y, min_vocab_size

DATA_SOURCES = ("synthetic", "pairs")


class DataParams(Block):
    """The synthetic world (docs/method.md#the-synthetic-world) and the size of each split."""

    source: Literal["synthetic"] = "synthetic"
    seed: StrictInt  # seed of the generator (each split gets its own stream)
    vocab_size: StrictInt  # V content tokens (PAD, SEP and EOS come on top)
    length_min: Annotated[StrictInt, rule(lambda v: v >= 1, "must be >= 1")]
    length_max: StrictInt  # x length L ~ Uniform{length_min..length_max}
    transforms: tuple[StrictStr, ...]  # the K strategies y = f_s(x), in label order
    shift: StrictInt  # offset k of the `shift` transform (y_t = x_t + k mod V)
    prior: Literal["uniform", "x_dependent"]  # p(s | x)
    prior_temperature: PositiveFloat  # temperature of the x_dependent prior (lower = peakier)
    noise: Probability  # probability that a y token is replaced by a uniform content token
    prefix: NonNegativeInt = 0  # y starts with x's first min(prefix, L) tokens, then f_s(x)
    decoy_positions: tuple[NonNegativeInt, ...] = ()  # y slots (0-based) noised at decoy_noise
    decoy_noise: Probability = 0.0  # replacement probability at decoy slots (> noise if any)
    n_train: PositiveInt
    n_val: PositiveInt
    n_test: PositiveInt

    @model_validator(mode="after")
    def _consistent(self) -> DataParams:
        errors = []
        if self.length_min > self.length_max:
            errors.append(
                fail(
                    "length_min",
                    f"must be <= data.length_max ({self.length_max})",
                    self.length_min,
                )
            )
        k = len(self.transforms)
        if k < 2:
            errors.append(fail("transforms", "needs at least 2 strategies (K >= 2)", k))
        known = sorted(TRANSFORMS)
        for i, name in enumerate(self.transforms):
            if name not in TRANSFORMS:
                errors.append(fail(f"transforms[{i}]", f"must be one of {known}", name))
        if len(set(self.transforms)) != k:
            errors.append(fail("transforms", "must not repeat a transform", list(self.transforms)))
        need = min_vocab_size(self.transforms, self.shift)
        if self.vocab_size < need:
            errors.append(
                fail("vocab_size", f"must be >= {need} for these transforms", self.vocab_size)
            )
        if "shift" in self.transforms and self.shift == 0:
            errors.append(fail("shift", "must be nonzero (0 makes `shift` a copy)", self.shift))
        errors += self._decoy_errors()
        raise_all(errors)
        return self

    def _decoy_errors(self) -> list[ValueError]:
        """Decoy slots are distinct, reachable by some y, and noisier than every other slot."""
        errors, positions = [], list(self.decoy_positions)
        if not positions:
            return errors
        if len(set(positions)) != len(positions):
            errors.append(fail("decoy_positions", "must not repeat a position", positions))
        longest = longest_y(self.transforms, self.length_max, self.prefix)
        for i, t in enumerate(positions):
            if t >= longest:
                text = f"must be < the longest y ({longest} tokens), or no y reaches it"
                errors.append(fail(f"decoy_positions[{i}]", text, t))
        if self.decoy_noise <= self.noise:
            text = f"must be > data.noise ({self.noise}) when data.decoy_positions is set"
            errors.append(fail("decoy_noise", text, self.decoy_noise))
        return errors

    def sizes(self) -> dict[str, int]:
        return {"train": self.n_train, "val": self.n_val, "test": self.n_test}


class PairsOracle(Block):
    """Columns of the pairs file that carry an exact oracle for each pair (nats)."""

    nll: StrictStr  # −log p(y | x) under the distribution the pairs are drawn from
    info: StrictStr  # I*: what a latent can know of y beyond x, e.g. log n for n equally likely y


Tokenizer = Literal["ids", "char", "whitespace"]


class PairsParams(Block):
    """The user's own (x, y) pairs (docs/own-data.md): one row per pair, split by a key."""

    source: Literal["pairs"]
    file: StrictStr  # a Parquet, CSV or TSV file under paths.pairs_dir
    format: Literal["auto", "parquet", "csv", "tsv"] = "auto"  # auto: from the file's suffix
    x_column: StrictStr = "x"
    y_column: StrictStr = "y"
    # rows with the same key share a split, so one x never sits in two; null: the x column
    key_column: StrictStr | None = None
    # ids: lists of token ids (Parquet) or space-separated ids (text), each in [0, vocab_size);
    # char / whitespace: text cut into characters or at whitespace, the vocabulary built from
    # every token in the file, in sorted order
    tokenizer: Tokenizer
    y_tokenizer: Tokenizer | None = (
        None  # y's own tokenizer (e.g. char x, whitespace y); null: same
    )
    vocab_size: PositiveInt | None = None  # ids only: the number of content tokens
    max_x_len: PositiveInt  # the models' x frame; longer x is an error, or cut when truncate
    max_y_len: PositiveInt  # the y frame (EOS comes on top)
    truncate: StrictBool = False  # cut longer sequences to the frames and count them
    seed: StrictInt  # the split's random stream
    val_fraction: OpenUnit  # share of keys held out for validation
    test_fraction: OpenUnit  # share of keys held out for the test split
    oracle: PairsOracle | None = None  # null: no oracle; the report says what it leaves out

    @model_validator(mode="after")
    def _consistent(self) -> PairsParams:
        errors = []
        if self.val_fraction + self.test_fraction >= 1.0:
            total = self.val_fraction + self.test_fraction
            text = "must leave a train split (val_fraction + test_fraction < 1)"
            errors.append(fail("test_fraction", text, total))
        ids = [t == "ids" for t in self.tokenizers]
        if any(ids) and not all(ids):
            text = "ids cannot be mixed with a text tokenizer (one vocabulary serves x and y)"
            errors.append(fail("y_tokenizer", text, self.y_tokenizer))
        elif all(ids) and self.vocab_size is None:
            errors.append(fail("vocab_size", "is required by tokenizer ids", None))
        elif not all(ids) and self.vocab_size is not None:
            text = f"applies to tokenizer ids only ({self.tokenizer} builds the vocabulary)"
            errors.append(fail("vocab_size", text, self.vocab_size))
        raise_all(errors)
        return self

    @property
    def tokenizers(self) -> tuple[str, str]:
        """The tokenizer of x and of y."""
        return self.tokenizer, self.y_tokenizer or self.tokenizer


def _source(value: Any) -> str:
    """The `source` of a data block; a block without one (or not a mapping) is synthetic."""
    if isinstance(value, dict):
        return value.get("source", "synthetic")
    return getattr(value, "source", "synthetic")


Data = Annotated[
    Annotated[DataParams, Tag("synthetic")] | Annotated[PairsParams, Tag("pairs")],
    Discriminator(_source),
]
"""The `data` block of either source."""
