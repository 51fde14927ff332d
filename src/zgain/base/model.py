"""The base LM p_base(y | x): a small causal Transformer over [x, SEP, y].

docs/method.md#the-base-model-and-its-surprisal.

`Block` is shared with the CVAE's encoders; the CVAE decoder is a copy of a `BaseLM`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from zgain.core.checkpoint import read_checkpoint, write_checkpoint
from zgain.core.vocab import Vocab
from zgain.params import TransformerConfig

INIT_STD = 0.02
"""Standard deviation of the GPT-2 style normal initialization of linear and embedding weights."""
KIND_BASE = "base_lm"
"""The "kind" of a base checkpoint."""


def init_weights(module: nn.Module) -> None:
    if isinstance(module, nn.Linear):
        nn.init.normal_(module.weight, std=INIT_STD)
        if module.bias is not None:
            nn.init.zeros_(module.bias)
    elif isinstance(module, nn.Embedding):
        nn.init.normal_(module.weight, std=INIT_STD)


def softmax_and_log_normalizer(scores: Tensor) -> tuple[Tensor, Tensor]:
    """softmax(scores) over the last axis and its log-normalizer ℓ = logsumexp, from one
    exponential pass: e = exp(s − m) with m the row maximum, softmax = e / Σe, ℓ = m + log Σe.

    Every row needs one finite score (a causal row sees its own key). m is held constant for
    autograd: both values are exactly invariant to it, so the gradients are those of softmax
    and logsumexp. On CPU, torch's softmax over rows this short (a dozen or so keys) measured
    slower than the whole of this (docs/performance.md#memory-attention).
    """
    # bf16 scores under autocast: normalize in float32 (at least), as softmax does
    wide = scores.to(torch.promote_types(scores.dtype, torch.float32))
    peak = wide.amax(dim=-1, keepdim=True).detach()
    shifted = (wide - peak).exp()
    total = shifted.sum(dim=-1, keepdim=True)
    return (shifted / total).to(scores.dtype), peak + total.log()


def causal_mask(queries: int, keys: int, device: torch.device | str) -> Tensor:
    """(queries, keys) bool, True where the query may attend: the queries are the last `queries`
    of the `keys` positions, and each sees itself and every position before it."""
    return torch.ones(queries, keys, dtype=torch.bool, device=device).tril(keys - queries)


def explicit_attention(
    q: Tensor, k: Tensor, v: Tensor, attn_mask: Tensor | None, causal: bool
) -> Tensor:
    """softmax(q kᵀ / √hs + mask) v, what `F.scaled_dot_product_attention` computes without
    dropout: q (B, nh, S', hs), k, v (B, nh, S, hs), attn_mask bool broadcastable to
    (B, nh, S', S) (True: may attend) -> (B, nh, S', hs)."""
    scores = (q @ k.transpose(2, 3)) * q.shape[-1] ** -0.5
    if causal:
        attn_mask = causal_mask(q.shape[2], k.shape[2], q.device)
    if attn_mask is not None:
        scores = scores.masked_fill(attn_mask.logical_not(), float("-inf"))
    return scores.softmax(dim=-1) @ v


@dataclass(frozen=True)
class Memory:
    """One extra attention slot for a causal block: key and value (B, nh, 1, hs), gate (nh,)."""

    keys: Tensor
    values: Tensor
    gate: Tensor

    def __post_init__(self) -> None:
        if self.keys.shape[2] != 1 or self.values.shape[2] != 1:
            raise ValueError(f"a memory holds one slot, got keys {tuple(self.keys.shape)}")

    def attend(self, q: Tensor, k: Tensor, v: Tensor, dropout: float) -> Tensor:
        """causal + tanh(gate) · (joint − causal), causal the causal attention over the block's
        own keys and joint the attention over [memory slot, causal keys] in one softmax;
        q (B, nh, S', hs) the queries of the last S' <= S positions, k, v (B, nh, S, hs)
        -> (B, nh, S', hs).

        Both come from one score matrix: with ℓ the log-normalizer of the causal scores, the
        slot's weight in the joint softmax is w = σ(s_slot − ℓ) and joint = (1 − w) · causal
        + w · v_slot exactly, so the output is causal + tanh(gate) · w · (v_slot − causal).
        The causal weights and ℓ come from one exponential pass (`softmax_and_log_normalizer`).
        Dropout (training) masks the causal weights and the slot's weight.
        """
        scale = q.shape[-1] ** -0.5
        future = causal_mask(q.shape[2], k.shape[2], q.device).logical_not()
        scores = ((q @ k.transpose(2, 3)) * scale).masked_fill(future, float("-inf"))
        weights, causal_norm = softmax_and_log_normalizer(scores)  # ℓ (B, nh, S', 1)
        keys, values = self.keys.to(q.dtype), self.values.to(v.dtype)
        share = torch.sigmoid((q * keys).sum(dim=3, keepdim=True) * scale - causal_norm)
        slot = share
        if dropout:
            weights, slot = F.dropout(weights, dropout), F.dropout(share, dropout)
        causal = weights @ v  # (B, nh, S, hs)
        gate = torch.tanh(self.gate).to(causal.dtype)[None, :, None, None]  # (1, nh, 1, 1)
        return causal + gate * (slot * values - share * causal)


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
        # softmax attention written out instead of torch's fused kernel: set on a stack's
        # template (zgain.cvae.stack), where vmap has no batching rule for the CPU kernel
        self.explicit_attention = False

    def forward(
        self,
        h: Tensor,
        key_mask: Tensor | None = None,
        memory: Memory | None = None,
        first: int = 0,
    ) -> Tensor:
        """h (B, S, D) -> (B, S − first, D): the outputs of positions first..S−1.

        key_mask (B, S) bool marks keys that may be attended to; only bidirectional blocks take
        one: a causal row always sees its own token. memory: extra key/value slots every
        position may attend to (causal blocks only); the attention output moves from the causal
        one toward the joint one by tanh(gate) per head, so a zero gate leaves the block exactly
        as without memory. first > 0 (causal blocks only) computes the queries, attention
        output and feed-forward of the kept rows alone; every position still gives its key and
        value, so the kept rows are those of the whole block.
        """
        if key_mask is not None and self.causal:
            raise ValueError("a causal block takes no key mask")
        if memory is not None and not self.causal:
            raise ValueError("only a causal block takes memory slots")
        batch, seq, width = h.shape
        if not 0 <= first < seq or (first and not self.causal):
            raise ValueError(f"first: 0..{seq - 1} for a causal block, 0 otherwise; got {first}")
        head = width // self.n_heads
        normed = self.ln_attn(h)
        if first:
            weight, bias = self.qkv.weight, self.qkv.bias
            q = F.linear(normed[:, first:], weight[:width], bias[:width])  # (B, S − first, D)
            k, v = F.linear(normed, weight[width:], bias[width:]).split(width, dim=2)
        else:
            q, k, v = self.qkv(normed).split(width, dim=2)  # each (B, S, D)
        q, k, v = (t.view(batch, -1, self.n_heads, head).transpose(1, 2) for t in (q, k, v))
        # q: (B, nh, S', hs), S' = S − first; k, v: (B, nh, S, hs)
        dropout = self.dropout if self.training else 0.0
        if memory is not None:
            attended = memory.attend(q, k, v, dropout)  # (B, nh, S', hs)
        else:
            attn_mask = None if key_mask is None else key_mask[:, None, None, :]  # (B, 1, 1, S)
            if first:
                attn_mask = causal_mask(seq - first, seq, h.device)  # (S', S)
            causal = self.causal and not first
            if self.explicit_attention and not dropout:
                attended = explicit_attention(q, k, v, attn_mask, causal)
            else:
                attended = F.scaled_dot_product_attention(
                    q, k, v, attn_mask=attn_mask, dropout_p=dropout, is_causal=causal
                )  # (B, nh, S', hs)
        attended = attended.transpose(1, 2).reshape(batch, seq - first, width)  # (B, S', D)
        h = h[:, first:] + self.resid_drop(self.attn_out(attended))
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

    def __init__(self, config: TransformerConfig, vocab: Vocab, max_len: int) -> None:
        super().__init__()
        if max_len < 1:
            raise ValueError(f"max_len: must be >= 1, got {max_len}")
        self.config, self.vocab, self.max_len = config, vocab, max_len
        self.tok_emb = nn.Embedding(vocab.size, config.d_model)
        self.pos_emb = nn.Embedding(max_len, config.d_model)
        self.seg_emb = nn.Embedding(max_len, config.d_model)
        self.emb_drop = nn.Dropout(config.dropout)
        self.blocks = nn.ModuleList(
            Block(config.d_model, config.n_heads, config.d_ff, config.dropout, causal=True)
            for _ in range(config.n_layers)
        )
        self.ln_f = nn.LayerNorm(config.d_model)
        self.head = nn.Linear(config.d_model, vocab.size)
        self.apply(init_weights)

    def forward(
        self,
        tokens: Tensor,
        embed_offset: Tensor | None = None,
        memory: Sequence[Memory] | None = None,
        first: int = 0,
    ) -> Tensor:
        """tokens (B, S) int64 -> logits (B, S − first, V) of positions first..S−1.

        embed_offset (B, D) or (B, S, D) is added to the input embedding at every position, and
        memory (one per block) adds attention slots: the points where the CVAE injects z. None
        leaves the LM z-free. first = X, the SEP index, gives the target frame alone
        (`zgain.core.sequences.target_frame` of the whole): the last block then works on those
        rows only.
        """
        return self.head(self.hidden(tokens, embed_offset, memory, first))  # (B, S', V)

    def hidden(
        self,
        tokens: Tensor,
        embed_offset: Tensor | None = None,
        memory: Sequence[Memory] | None = None,
        first: int = 0,
    ) -> Tensor:
        """tokens (B, S) int64 -> the final layer-normed hidden states (B, S − first, D) the
        head reads, of positions first..S−1."""
        if memory is not None and len(memory) != len(self.blocks):
            raise ValueError(f"memory: one per block ({len(self.blocks)}), got {len(memory)}")
        seq = tokens.shape[1]
        if seq > self.max_len:
            raise ValueError(f"sequence length {seq} exceeds max_len={self.max_len}")
        positions = torch.arange(seq, device=tokens.device)  # (S,)
        segments = segment_positions(tokens, self.vocab).clamp(max=self.max_len - 1)
        h = self.tok_emb(tokens) + self.pos_emb(positions) + self.seg_emb(segments)  # (B, S, D)
        if embed_offset is not None:
            h = h + (embed_offset[:, None, :] if embed_offset.dim() == 2 else embed_offset)
        h = self.emb_drop(h)
        last = len(self.blocks) - 1
        for index, block in enumerate(self.blocks):
            only = first if index == last else 0
            h = block(h, memory=None if memory is None else memory[index], first=only)
        return self.ln_f(h)

    def checkpoint_config(self) -> dict[str, Any]:
        """The plain-dict config that rebuilds this model (what a checkpoint stores)."""
        return {
            "vocab_size": self.vocab.size,
            "max_len": self.max_len,
            "model": self.config.model_dump(),
        }

    @classmethod
    def from_checkpoint_config(cls, config: dict[str, Any]) -> BaseLM:
        """A freshly initialized model of the architecture `checkpoint_config` describes."""
        return cls(
            TransformerConfig(**config["model"]),
            Vocab.from_size(config["vocab_size"]),
            config["max_len"],
        )


def save_base(path: str | Path, model: BaseLM, extra: dict[str, Any] | None = None) -> None:
    """Atomically write the base checkpoint (weights, config, `extra` plain values)."""
    write_checkpoint(path, KIND_BASE, model.checkpoint_config(), model, extra)


def load_base(path: str | Path) -> BaseLM:
    """The BaseLM saved at `path`, on CPU, in eval mode."""
    payload = read_checkpoint(path, KIND_BASE)
    # Building draws random initial weights; keep the caller's RNG stream untouched.
    with torch.random.fork_rng(devices=[]):
        model = BaseLM.from_checkpoint_config(payload["config"])
    model.load_state_dict(payload["state_dict"])
    return model.eval()
