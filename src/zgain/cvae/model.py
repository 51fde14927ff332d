"""The CVAE built on a copy of the base LM (docs/method.md#the-cvae).

The decoder starts as an exact copy of the base LM plus a z-injection whose weight and bias are
zero, so at step 0 it reproduces every base surprisal exactly (entangled initialization). The
posterior and the conditional prior are small bidirectional encoders built from the same
`Block` as the decoder; with `encoders_read_base` they also read the hidden states of a second,
frozen copy of the base (`base_reader`), which is never trained.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from zgain.base.model import BaseLM, Block, Memory, init_weights
from zgain.core.checkpoint import read_checkpoint, write_checkpoint
from zgain.core.vocab import Vocab
from zgain.cvae.gaussian import clamp_logvar
from zgain.params import CVAEConfig

FF_MULT = 4
"""Feed-forward width of an encoder block, as a multiple of its model width."""
KIND_CVAE = "cvae"
"""The "kind" of a CVAE checkpoint."""


class GaussianEncoder(nn.Module):
    """A bidirectional encoder: tokens (+ features) -> mean-pooled non-PAD states -> (mu, logvar).

    With `feature_width`, per-position features (B, S', feature_width), S' <= S, are projected
    to the model width and added to the token + position embeddings of the first S' positions.
    """

    def __init__(
        self,
        vocab: Vocab,
        max_len: int,
        cfg: CVAEConfig,
        dropout: float,
        zero_output: bool,
        feature_width: int | None = None,
    ) -> None:
        super().__init__()
        width = cfg.encoder_d_model
        self.pad = vocab.pad
        self.tok_emb = nn.Embedding(vocab.size, width)
        self.pos_emb = nn.Embedding(max_len, width)
        self.feature_proj = None if feature_width is None else nn.Linear(feature_width, width)
        self.emb_drop = nn.Dropout(dropout)
        self.blocks = nn.ModuleList(
            Block(width, cfg.encoder_heads, FF_MULT * width, dropout, causal=False)
            for _ in range(cfg.encoder_layers)
        )
        self.ln_f = nn.LayerNorm(width)
        self.out = nn.Linear(width, 2 * cfg.latent_dim)
        self.apply(init_weights)
        if zero_output:
            # A conditional prior starts as N(0, I), the standard prior.
            nn.init.zeros_(self.out.weight)
            nn.init.zeros_(self.out.bias)

    def forward(self, tokens: Tensor, features: Tensor | None = None) -> tuple[Tensor, Tensor]:
        """tokens (B, S) int64 -> mu (B, Dz), logvar (B, Dz) float32, logvar clamped.

        features (B, S', F) are required exactly when the encoder was built with a feature width.
        """
        if (features is None) != (self.feature_proj is None):
            raise ValueError("features must be given exactly when the encoder reads features")
        keep = tokens != self.pad  # (B, S); SEP is never PAD, so no row is empty
        positions = torch.arange(tokens.shape[1], device=tokens.device)  # (S,)
        h = self.tok_emb(tokens) + self.pos_emb(positions)  # (B, S, D)
        if self.feature_proj is not None:
            projected = self.feature_proj(features)  # (B, S', D)
            h = h + F.pad(projected, (0, 0, 0, tokens.shape[1] - projected.shape[1]))
        h = self.emb_drop(h)
        for block in self.blocks:
            h = block(h, key_mask=keep)
        h = self.ln_f(h)
        weights = keep.unsqueeze(-1).to(h.dtype)  # (B, S, 1)
        pooled = (h * weights).sum(dim=1) / weights.sum(dim=1).clamp(min=1.0)  # (B, D)
        mu, logvar = self.out(pooled).float().chunk(2, dim=-1)  # each (B, Dz)
        return mu, clamp_logvar(logvar)


class CVAE(nn.Module):
    """Decoder p(y|x,z) = copy of the base + zero-initialized z-injection; q(z|x,y); p(z|x)."""

    def __init__(self, base: BaseLM, cfg: CVAEConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.vocab = base.vocab
        self.decoder = copy.deepcopy(base)
        self.z_injection = nn.Linear(cfg.latent_dim, base.config.d_model)
        # Zero weight and bias: the decoder's logits equal the base's for every z at step 0.
        nn.init.zeros_(self.z_injection.weight)
        nn.init.zeros_(self.z_injection.bias)
        # z as memory: per decoder layer, z -> one key and one value slot per head, mixed in
        # through a per-head gate that starts at 0 (so the decoder still equals the base).
        layers, width = base.config.n_layers, base.config.d_model
        self.n_heads = base.config.n_heads
        self.z_memory = nn.Linear(cfg.latent_dim, layers * 2 * width) if cfg.z_memory else None
        self.memory_gate = nn.Parameter(torch.zeros(layers, self.n_heads)) if cfg.z_memory else None
        # A second, frozen copy of the base whose hidden states the encoders read: features
        # that already align y with x, so q(z|x,y) need not discover them through the decoder.
        self.base_reader = (
            copy.deepcopy(base).requires_grad_(False) if cfg.encoders_read_base else None
        )
        features = base.config.d_model if cfg.encoders_read_base else None
        # The encoder reads [x, SEP, y, EOS], one slot longer than the decoder's input.
        encoder_len = base.max_len + 1
        dropout = base.config.dropout
        self.posterior_encoder = GaussianEncoder(
            self.vocab, encoder_len, cfg, dropout, zero_output=False, feature_width=features
        )
        self.prior_encoder = (
            GaussianEncoder(
                self.vocab, encoder_len, cfg, dropout, zero_output=True, feature_width=features
            )
            if cfg.prior == "conditional"
            else None
        )
        self.bow_head = nn.Linear(cfg.latent_dim, self.vocab.n_content)
        init_weights(self.bow_head)
        self._apply_freeze()

    def _apply_freeze(self) -> None:
        # Set every flag explicitly: the caller's base may itself have been frozen.
        train_all = self.cfg.freeze_decoder == "none"
        for param in self.decoder.parameters():
            param.requires_grad_(train_all)
        if self.cfg.freeze_decoder == "embeddings":
            for name, param in self.decoder.named_parameters():
                param.requires_grad_(not name.startswith(("tok_emb.", "pos_emb.")))

    def train(self, mode: bool = True) -> CVAE:
        super().train(mode)
        if self.base_reader is not None:
            self.base_reader.eval()  # frozen: never in training mode (dropout)
        return self

    def base_features(self, tokens: Tensor) -> Tensor | None:
        """The frozen base's hidden states (B, min(S, max_len), D) of an encoder input (B, S);
        None when the encoders do not read the base. The encoder input's last slot (EOS of the
        longest y) lies past the base's max_len and gets no feature."""
        if self.base_reader is None:
            return None
        with torch.no_grad():
            return self.base_reader.hidden(tokens[:, : self.base_reader.max_len])

    def posterior(
        self, encoder_input: Tensor, features: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        """q(z|x,y): encoder_input (B, X+1+T) -> mu, logvar (B, Dz).

        features: `base_features(encoder_input)` when the caller has them already (runs that
        share a batch share the frozen reader's pass); None computes them here.
        """
        if features is None:
            features = self.base_features(encoder_input)
        return self.posterior_encoder(encoder_input, features)

    def prior(self, prior_input: Tensor, features: Tensor | None = None) -> tuple[Tensor, Tensor]:
        """p(z|x): prior_input (B, X+1) -> mu, logvar (B, Dz); zeros for the standard prior.

        features: as for `posterior`, of prior_input.
        """
        if self.prior_encoder is None:
            zeros = torch.zeros(
                prior_input.shape[0], self.cfg.latent_dim, device=prior_input.device
            )
            return zeros, zeros.clone()
        if features is None:
            features = self.base_features(prior_input)
        return self.prior_encoder(prior_input, features)

    def memory(self, z: Tensor) -> list[Memory] | None:
        """z (B, Dz) -> one `Memory` (a key and a value slot per head) per decoder layer; None
        without `z_memory`."""
        if self.z_memory is None or self.memory_gate is None:
            return None
        batch = z.shape[0]
        layers = self.memory_gate.shape[0]
        slots = self.z_memory(z).view(batch, layers, 2, self.n_heads, 1, -1)  # (B, L, 2, nh, 1, hs)
        return [
            Memory(slots[:, layer, 0], slots[:, layer, 1], self.memory_gate[layer])
            for layer in range(layers)
        ]

    def decode(self, decoder_input: Tensor, z: Tensor, first: int = 0) -> Tensor:
        """p(y|x,z): decoder_input (B, X+T), z (B, Dz) -> logits (B, X+T − first, V) of
        positions first..; first = X gives the target frame (`BaseLM.forward`)."""
        return self.decoder(
            decoder_input, embed_offset=self.z_injection(z), memory=self.memory(z), first=first
        )

    def bow_logits(self, z: Tensor) -> Tensor:
        """Bag-of-words logits over content tokens: z (B, Dz) -> (B, n_content)."""
        return self.bow_head(z)

    def checkpoint_config(self) -> dict[str, Any]:
        """The plain-dict config that rebuilds this model (what a checkpoint stores)."""
        return {"base": self.decoder.checkpoint_config(), "cvae": self.cfg.model_dump()}


def save_cvae(path: str | Path, model: CVAE, extra: dict[str, Any] | None = None) -> None:
    """Atomically write the CVAE checkpoint (weights, config, `extra` plain values)."""
    write_checkpoint(path, KIND_CVAE, model.checkpoint_config(), model, extra)


def load_cvae(path: str | Path) -> tuple[CVAE, dict[str, Any]]:
    """The CVAE saved at `path` (on CPU, eval mode, freeze flags reapplied) and its payload."""
    payload = read_checkpoint(path, KIND_CVAE)
    with torch.random.fork_rng(devices=[]):
        base = BaseLM.from_checkpoint_config(payload["config"]["base"])
        model = CVAE(base, CVAEConfig(**payload["config"]["cvae"]))
    model.load_state_dict(payload["state_dict"])
    return model.eval(), payload
