"""From typed params to ready objects: the world's frames, packed splits, the base model."""

from __future__ import annotations

from pathlib import Path

from zgain.data import Split, load_split
from zgain.models import CVAEConfig, TransformerConfig
from zgain.params import BaseParams, CommonCVAEParams, DataParams
from zgain.sequences import SeqBatch, pack
from zgain.synthetic import World
from zgain.vocab import Vocab


def vocab_of(world: World) -> Vocab:
    return Vocab(world.vocab_size)


def pack_split(split: Split, world: World) -> SeqBatch:
    """A whole split laid out in the world's fixed frames."""
    return pack(
        split.x,
        split.x_len,
        split.y,
        split.y_len,
        vocab=vocab_of(world),
        max_x_len=world.length_max,
        max_y_len=world.max_y_len,
    )


def load_packed(synthetic_dir: str | Path, split: str, world: World) -> tuple[Split, SeqBatch]:
    data = load_split(Path(synthetic_dir) / f"{split}.parquet", world)
    return data, pack_split(data, world)


def base_config(base: BaseParams, data: DataParams) -> TransformerConfig:
    """The base LM architecture for this world: vocabulary and context fixed by its frames."""
    world = data.world()
    return TransformerConfig(
        vocab_size=vocab_of(world).size,
        max_len=world.length_max + 1 + world.max_y_len + 1,
        d_model=base.d_model,
        n_layers=base.n_layers,
        n_heads=base.n_heads,
        d_ff=base.d_ff,
        dropout=base.dropout,
    )


def cvae_config(common: CommonCVAEParams) -> CVAEConfig:
    return CVAEConfig(
        latent_dim=common.latent_dim,
        encoder_layers=common.encoder_layers,
        encoder_d_model=common.encoder_d_model,
        encoder_heads=common.encoder_heads,
        prior=common.prior,
        freeze_decoder=common.freeze_decoder,
    )
