"""The base LM, the CVAE built on a copy of it, devices and checkpoints.

The CVAE decoder starts as an exact copy of the base LM plus a z-injection whose weight and bias
are zero, so at step 0 it reproduces every base surprisal exactly (entangled initialization,
SPEC §5). The posterior and the conditional prior are small bidirectional encoders built from the
same `Block` as the decoder.
"""

from __future__ import annotations

import contextlib
import copy
import os
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from zgain.vocab import Vocab

INIT_STD = 0.02
"""Standard deviation of the GPT-2 style normal initialization of linear and embedding weights."""
FF_MULT = 4
"""Feed-forward width of an encoder block, as a multiple of its model width."""
LOGVAR_MIN, LOGVAR_MAX = -10.0, 10.0
"""Range log sigma^2 is clamped to, so exp(logvar) neither overflows nor underflows."""
KIND_BASE, KIND_CVAE = "base_lm", "cvae"
"""Values of a checkpoint's "kind" key."""
_RESERVED_KEYS = ("kind", "config", "state_dict")


@dataclass(frozen=True)
class TransformerConfig:
    """Architecture of the base LM (and so of the CVAE decoder)."""

    vocab_size: int
    max_len: int
    d_model: int
    n_layers: int
    n_heads: int
    d_ff: int
    dropout: float

    def __post_init__(self) -> None:
        for name in ("vocab_size", "max_len", "d_model", "n_layers", "n_heads", "d_ff"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name}: must be >= 1, got {getattr(self, name)!r}")
        if self.d_model % self.n_heads != 0:
            raise ValueError(
                f"d_model: must be divisible by n_heads={self.n_heads}, got {self.d_model}"
            )
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"dropout: must be in [0, 1), got {self.dropout!r}")


@dataclass(frozen=True)
class CVAEConfig:
    """Latent size, encoder architecture, prior family and what of the decoder to freeze."""

    latent_dim: int
    encoder_layers: int
    encoder_d_model: int
    encoder_heads: int
    prior: Literal["standard", "conditional"]
    freeze_decoder: Literal["none", "all", "embeddings"]

    def __post_init__(self) -> None:
        for name in ("latent_dim", "encoder_layers", "encoder_d_model", "encoder_heads"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name}: must be >= 1, got {getattr(self, name)!r}")
        if self.encoder_d_model % self.encoder_heads != 0:
            raise ValueError(
                f"encoder_d_model: must be divisible by encoder_heads={self.encoder_heads}, "
                f"got {self.encoder_d_model}"
            )
        if self.prior not in ("standard", "conditional"):
            raise ValueError(f"prior: must be 'standard' or 'conditional', got {self.prior!r}")
        if self.freeze_decoder not in ("none", "all", "embeddings"):
            raise ValueError(
                "freeze_decoder: must be 'none', 'all' or 'embeddings', "
                f"got {self.freeze_decoder!r}"
            )


def _init_weights(module: nn.Module) -> None:
    if isinstance(module, nn.Linear):
        nn.init.normal_(module.weight, std=INIT_STD)
        if module.bias is not None:
            nn.init.zeros_(module.bias)
    elif isinstance(module, nn.Embedding):
        nn.init.normal_(module.weight, std=INIT_STD)


class Block(nn.Module):
    """A pre-LayerNorm Transformer block; causal for the LM, bidirectional for the encoders."""

    def __init__(self, d_model: int, n_heads: int, d_ff: int, dropout: float, causal: bool) -> None:
        super().__init__()
        self.n_heads, self.dropout, self.causal = n_heads, dropout, causal
        self.ln_attn = nn.LayerNorm(d_model)
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.attn_out = nn.Linear(d_model, d_model)
        self.ln_mlp = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(
            nn.Linear(d_model, d_ff), nn.GELU(), nn.Linear(d_ff, d_model), nn.Dropout(dropout)
        )
        self.resid_drop = nn.Dropout(dropout)

    def forward(self, h: Tensor, key_mask: Tensor | None = None) -> Tensor:
        """h (B, S, D) -> (B, S, D); key_mask (B, S) bool marks keys that may be attended to.

        Only bidirectional blocks take a key mask: a causal row always sees its own token.
        """
        if key_mask is not None and self.causal:
            raise ValueError("a causal block takes no key mask")
        batch, seq, width = h.shape
        head = width // self.n_heads
        q, k, v = self.qkv(self.ln_attn(h)).split(width, dim=2)  # each (B, S, D)
        q, k, v = (t.view(batch, seq, self.n_heads, head).transpose(1, 2) for t in (q, k, v))
        # q, k, v: (B, nh, S, hs)
        attn_mask = None if key_mask is None else key_mask[:, None, None, :]  # (B, 1, 1, S)
        attended = F.scaled_dot_product_attention(
            q,
            k,
            v,
            attn_mask=attn_mask,
            dropout_p=self.dropout if self.training else 0.0,
            is_causal=self.causal,
        )  # (B, nh, S, hs)
        attended = attended.transpose(1, 2).reshape(batch, seq, width)  # (B, S, D)
        h = h + self.resid_drop(self.attn_out(attended))
        return h + self.mlp(self.ln_mlp(h))


def segment_positions(tokens: Tensor, vocab: Vocab) -> Tensor:
    """Index of each token within its segment: x_j -> j, SEP -> 0, y_t -> t + 1. (B, S) int64.

    Left padding puts x_j at an absolute position that depends on the x length, so copying
    y_t = x_t would need the length first; this second position signal makes "the x token with
    my index" a direct lookup. Leading PAD gets index 0; every sequence holds one SEP.
    """
    content = (tokens != vocab.pad).long()  # (B, S)
    after_sep = (tokens == vocab.sep).long().cumsum(dim=1) > 0  # (B, S) True from SEP on
    x_index = content.cumsum(dim=1) - 1  # (B, S) running count of x tokens before SEP
    positions = torch.arange(tokens.shape[1], device=tokens.device)[None, :]  # (1, S)
    sep_at = torch.where(tokens == vocab.sep, positions, tokens.shape[1]).min(dim=1).values  # (B,)
    y_index = positions - sep_at[:, None]  # (B, S)
    return torch.where(after_sep, y_index, x_index.clamp(min=0))


class BaseLM(nn.Module):
    """A small GPT-style causal LM over [x, SEP, y] with an additive input-embedding offset.

    Inputs are embedded as token + absolute position + position within the segment.
    """

    def __init__(self, config: TransformerConfig) -> None:
        super().__init__()
        self.config = config
        self.tok_emb = nn.Embedding(config.vocab_size, config.d_model)
        self.pos_emb = nn.Embedding(config.max_len, config.d_model)
        self.seg_emb = nn.Embedding(config.max_len, config.d_model)
        self.vocab = Vocab.from_size(config.vocab_size)
        self.emb_drop = nn.Dropout(config.dropout)
        self.blocks = nn.ModuleList(
            Block(config.d_model, config.n_heads, config.d_ff, config.dropout, causal=True)
            for _ in range(config.n_layers)
        )
        self.ln_f = nn.LayerNorm(config.d_model)
        self.head = nn.Linear(config.d_model, config.vocab_size)
        self.apply(_init_weights)

    def forward(self, tokens: Tensor, embed_offset: Tensor | None = None) -> Tensor:
        """tokens (B, S) int64 -> logits (B, S, V).

        embed_offset (B, D) or (B, S, D) is added to the input embedding at every position:
        the point where the CVAE injects z. None leaves the LM z-free.
        """
        seq = tokens.shape[1]
        if seq > self.config.max_len:
            raise ValueError(f"sequence length {seq} exceeds max_len={self.config.max_len}")
        positions = torch.arange(seq, device=tokens.device)  # (S,)
        segments = segment_positions(tokens, self.vocab).clamp(max=self.config.max_len - 1)
        h = self.tok_emb(tokens) + self.pos_emb(positions) + self.seg_emb(segments)  # (B, S, D)
        if embed_offset is not None:
            h = h + (embed_offset[:, None, :] if embed_offset.dim() == 2 else embed_offset)
        h = self.emb_drop(h)
        for block in self.blocks:
            h = block(h)
        return self.head(self.ln_f(h))  # (B, S, V)


class GaussianEncoder(nn.Module):
    """A bidirectional encoder: tokens -> mean-pooled non-PAD states -> (mu, logvar)."""

    def __init__(
        self,
        vocab: Vocab,
        max_len: int,
        cfg: CVAEConfig,
        dropout: float,
        zero_output: bool,
    ) -> None:
        super().__init__()
        width = cfg.encoder_d_model
        self.pad = vocab.pad
        self.tok_emb = nn.Embedding(vocab.size, width)
        self.pos_emb = nn.Embedding(max_len, width)
        self.emb_drop = nn.Dropout(dropout)
        self.blocks = nn.ModuleList(
            Block(width, cfg.encoder_heads, FF_MULT * width, dropout, causal=False)
            for _ in range(cfg.encoder_layers)
        )
        self.ln_f = nn.LayerNorm(width)
        self.out = nn.Linear(width, 2 * cfg.latent_dim)
        self.apply(_init_weights)
        if zero_output:
            # A conditional prior starts as N(0, I), the standard prior.
            nn.init.zeros_(self.out.weight)
            nn.init.zeros_(self.out.bias)

    def forward(self, tokens: Tensor) -> tuple[Tensor, Tensor]:
        """tokens (B, S) int64 -> mu (B, Dz), logvar (B, Dz) float32, logvar clamped."""
        keep = tokens != self.pad  # (B, S); SEP is never PAD, so no row is empty
        positions = torch.arange(tokens.shape[1], device=tokens.device)  # (S,)
        h = self.emb_drop(self.tok_emb(tokens) + self.pos_emb(positions))  # (B, S, D)
        for block in self.blocks:
            h = block(h, key_mask=keep)
        h = self.ln_f(h)
        weights = keep.unsqueeze(-1).to(h.dtype)  # (B, S, 1)
        pooled = (h * weights).sum(dim=1) / weights.sum(dim=1).clamp(min=1.0)  # (B, D)
        mu, logvar = self.out(pooled).float().chunk(2, dim=-1)  # each (B, Dz)
        return mu, logvar.clamp(LOGVAR_MIN, LOGVAR_MAX)


def reparameterize(mu: Tensor, logvar: Tensor, generator: torch.Generator | None = None) -> Tensor:
    """z = mu + sigma * eps with eps ~ N(0, I); mu, logvar (B, Dz) -> z (B, Dz)."""
    eps = torch.randn(mu.shape, generator=generator, device=mu.device, dtype=mu.dtype)
    return mu + torch.exp(0.5 * logvar.clamp(LOGVAR_MIN, LOGVAR_MAX)) * eps


class CVAE(nn.Module):
    """Decoder p(y|x,z) = copy of the base + zero-initialized z-injection; q(z|x,y); p(z|x)."""

    reparameterize = staticmethod(reparameterize)

    def __init__(self, base: BaseLM, cfg: CVAEConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.base_config = base.config
        self.vocab = Vocab.from_size(base.config.vocab_size)
        self.decoder = copy.deepcopy(base)
        self.z_injection = nn.Linear(cfg.latent_dim, base.config.d_model)
        # Zero weight and bias: the decoder's logits equal the base's for every z at step 0.
        nn.init.zeros_(self.z_injection.weight)
        nn.init.zeros_(self.z_injection.bias)
        # The encoder reads [x, SEP, y, EOS], one slot longer than the decoder's input.
        encoder_len = base.config.max_len + 1
        dropout = base.config.dropout
        self.posterior_encoder = GaussianEncoder(
            self.vocab, encoder_len, cfg, dropout, zero_output=False
        )
        self.prior_encoder = (
            GaussianEncoder(self.vocab, encoder_len, cfg, dropout, zero_output=True)
            if cfg.prior == "conditional"
            else None
        )
        self.bow_head = nn.Linear(cfg.latent_dim, self.vocab.n_content)
        _init_weights(self.bow_head)
        self._apply_freeze()

    def _apply_freeze(self) -> None:
        # Set every flag explicitly: the caller's base may itself have been frozen.
        train_all = self.cfg.freeze_decoder == "none"
        for param in self.decoder.parameters():
            param.requires_grad_(train_all)
        if self.cfg.freeze_decoder == "embeddings":
            for name, param in self.decoder.named_parameters():
                param.requires_grad_(not name.startswith(("tok_emb.", "pos_emb.")))

    def posterior(self, encoder_input: Tensor) -> tuple[Tensor, Tensor]:
        """q(z|x,y): encoder_input (B, X+1+T) -> mu, logvar (B, Dz)."""
        return self.posterior_encoder(encoder_input)

    def prior(self, prior_input: Tensor) -> tuple[Tensor, Tensor]:
        """p(z|x): prior_input (B, X+1) -> mu, logvar (B, Dz); zeros for the standard prior."""
        if self.prior_encoder is None:
            zeros = torch.zeros(
                prior_input.shape[0], self.cfg.latent_dim, device=prior_input.device
            )
            return zeros, zeros.clone()
        return self.prior_encoder(prior_input)

    def decode(self, decoder_input: Tensor, z: Tensor) -> Tensor:
        """p(y|x,z): decoder_input (B, X+T), z (B, Dz) -> logits (B, X+T, V)."""
        return self.decoder(decoder_input, embed_offset=self.z_injection(z))

    def bow_logits(self, z: Tensor) -> Tensor:
        """Bag-of-words logits over content tokens: z (B, Dz) -> (B, n_content)."""
        return self.bow_head(z)


def device_auto(name: Literal["auto", "cpu", "cuda", "mps"]) -> torch.device:
    """The device to run on: `auto` picks cuda, then mps, then cpu; an unavailable one raises."""
    available = {
        "cuda": torch.cuda.is_available(),
        "mps": torch.backends.mps.is_available(),
        "cpu": True,
    }
    if name == "auto":
        return torch.device(next(kind for kind, ok in available.items() if ok))
    if name not in available:
        raise ValueError(f"device: must be one of auto, cpu, cuda, mps, got {name!r}")
    if not available[name]:
        raise RuntimeError(f"device {name!r} was requested but is not available")
    return torch.device(name)


def autocast_context(device: torch.device) -> contextlib.AbstractContextManager[Any]:
    """bf16 autocast on CUDA; a no-op context elsewhere."""
    if device.type == "cuda":
        return torch.autocast(device_type="cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def model_config(model: BaseLM | CVAE) -> dict[str, Any]:
    """The plain-dict architecture config that rebuilds `model` (what a checkpoint stores)."""
    if isinstance(model, CVAE):
        return {"base": asdict(model.base_config), "cvae": asdict(model.cfg)}
    return asdict(model.config)


def save_checkpoint(
    path: str | Path,
    model: BaseLM | CVAE,
    config_dict: dict[str, Any] | None = None,
    extra: dict[str, Any] | None = None,
) -> None:
    """Atomically write {"kind", "config", "state_dict", **extra} to `path`.

    config_dict defaults to `model_config(model)`; one passed in must equal it, since loading
    rebuilds the model from it. extra holds plain Python values (loading uses weights_only).
    """
    expected = model_config(model)
    if config_dict is not None and config_dict != expected:
        raise ValueError(f"config_dict {config_dict!r} does not describe the model ({expected!r})")
    extra = dict(extra or {})
    clash = sorted(set(extra) & set(_RESERVED_KEYS))
    if clash:
        raise ValueError(f"extra: keys {clash} are reserved")
    payload = {
        "kind": KIND_CVAE if isinstance(model, CVAE) else KIND_BASE,
        "config": expected,
        "state_dict": {k: v.detach().cpu() for k, v in model.state_dict().items()},
        **extra,
    }
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    # Same directory as the target, so os.replace is an atomic rename on one filesystem.
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            torch.save(payload, handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, target)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise


def read_checkpoint(path: str | Path, kind: str) -> dict[str, Any]:
    """The checkpoint dict at `path`, on CPU; ValueError naming the path if its kind differs."""
    payload = torch.load(Path(path), map_location="cpu", weights_only=True)
    found = payload.get("kind") if isinstance(payload, dict) else None
    if found != kind:
        raise ValueError(f"{path}: checkpoint kind is {found!r}, expected {kind!r}")
    return payload


def load_base(path: str | Path) -> BaseLM:
    """The BaseLM saved at `path`, on CPU, in eval mode."""
    payload = read_checkpoint(path, KIND_BASE)
    # Building draws random initial weights; keep the caller's RNG stream untouched.
    with torch.random.fork_rng(devices=[]):
        model = BaseLM(TransformerConfig(**payload["config"]))
    model.load_state_dict(payload["state_dict"])
    return model.eval()


def load_cvae(path: str | Path) -> CVAE:
    """The CVAE saved at `path`, on CPU, in eval mode, with its freeze flags reapplied."""
    payload = read_checkpoint(path, KIND_CVAE)
    with torch.random.fork_rng(devices=[]):
        base = BaseLM(TransformerConfig(**payload["config"]["base"]))
        model = CVAE(base, CVAEConfig(**payload["config"]["cvae"]))
    model.load_state_dict(payload["state_dict"])
    return model.eval()
