"""A one-layer causal language model that generates with a KV cache.

Tokens are embedded (token + position), go through one block of causal multi-head
self-attention with a residual connection, and a linear head gives the next-token logits:

    x = wte(idx) + wpe(positions)                   (B, T, C)
    x = x + c_proj(attention(c_attn(x)))            causal, n_head heads of size C / n_head
    logits = lm_head(x)                             (B, T, vocab_size)

`forward(idx)` computes this for a whole sequence. Generation runs it one token at a time:
`prefill(idx)` starts a new sequence with a prompt and keeps every position's keys and values;
each `decode(idx)` embeds the next token at the next position, attends to the cached keys and
values and its own, and appends its own to the cache. Each decode's logits equal those of the
uncached forward at that position of the whole sequence.

Shapes: B batch, T sequence length, C = n_embd, nh = n_head, hs = C / nh.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from grader.variants import WrongVariant


class KVCacheLM(nn.Module):
    def __init__(self, vocab_size: int, block_size: int, n_embd: int, n_head: int) -> None:
        super().__init__()
        assert n_embd % n_head == 0, "n_embd must be divisible by n_head"
        self.n_head = n_head
        self.wte = nn.Embedding(vocab_size, n_embd)
        self.wpe = nn.Embedding(block_size, n_embd)
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)
        self.k_cache: torch.Tensor | None = None  # (B, nh, T_past, hs)
        self.v_cache: torch.Tensor | None = None

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        """The uncached computation on a whole sequence idx (B, T): logits (B, T, vocab)."""
        x = self.embed(idx, start=0)
        q, k, v = self.qkv(x)
        return self.head(x, q, k, v, past=0)

    def prefill(self, idx: torch.Tensor) -> torch.Tensor:
        """Start a new sequence with the prompt idx (B, T0): cache its keys and values, return
        its logits (B, T0, vocab)."""
        self.k_cache = self.v_cache = None
        return self.extend(idx)

    def decode(self, idx: torch.Tensor) -> torch.Tensor:
        """The next token idx (B, 1) of the sequence: logits (B, 1, vocab)."""
        return self.extend(idx)

    def extend(self, idx: torch.Tensor) -> torch.Tensor:
        past = 0 if self.k_cache is None else self.k_cache.shape[2]
        x = self.embed(idx, start=past)
        q, k, v = self.qkv(x)  # each (B, nh, T_new, hs)
        k, v = self.append_to_cache(k, v)  # each (B, nh, past + T_new, hs)
        return self.head(x, q, k, v, past)

    def embed(self, idx: torch.Tensor, start: int) -> torch.Tensor:
        positions = torch.arange(start, start + idx.shape[1])  # (T,)
        x: torch.Tensor = self.wte(idx) + self.wpe(positions)
        return x  # (B, T, C)

    def qkv(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(C, dim=2)  # each (B, T, C)
        heads = [t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v)]
        return heads[0], heads[1], heads[2]  # each (B, nh, T, hs)

    def append_to_cache(self, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, ...]:
        if self.k_cache is not None and self.v_cache is not None:
            k = torch.cat([self.k_cache, k], dim=2)  # along the time axis
            v = torch.cat([self.v_cache, v], dim=2)
        self.k_cache, self.v_cache = k.detach(), v.detach()
        return k, v

    def head(
        self, x: torch.Tensor, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, past: int
    ) -> torch.Tensor:
        """Attention of the new queries q (positions past, past+1, ...) over the keys k, the
        residual connection and the logits."""
        B, T, C = x.shape
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (B, nh, T, past + T)
        scores = scores.masked_fill(~self.causal_mask(T, k.shape[2], past), float("-inf"))
        y = F.softmax(scores, dim=-1) @ v  # (B, nh, T, hs)
        y = y.transpose(1, 2).reshape(B, T, C)  # (B, T, C): heads side by side
        logits: torch.Tensor = self.lm_head(x + self.c_proj(y))
        return logits

    def causal_mask(self, queries: int, keys: int, past: int) -> torch.Tensor:
        """True where query i (at position past + i) may attend to key j: j <= past + i."""
        return torch.ones(queries, keys, dtype=torch.bool).tril(diagonal=past)


# --- Known mistakes -------------------------------------------------------------------------


class _CacheNotUsed(KVCacheLM):
    def append_to_cache(self, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, ...]:
        super().append_to_cache(k, v)
        return k, v  # the new token attends to itself alone


class _CacheNotAppended(KVCacheLM):
    def decode(self, idx: torch.Tensor) -> torch.Tensor:
        k_cache, v_cache = self.k_cache, self.v_cache
        logits = super().decode(idx)
        self.k_cache, self.v_cache = k_cache, v_cache  # the prompt's keys only, ever
        return logits


class _PositionsRestart(KVCacheLM):
    def decode(self, idx: torch.Tensor) -> torch.Tensor:
        assert self.k_cache is not None and self.v_cache is not None
        x = self.embed(idx, start=0)
        q, k, v = self.qkv(x)
        past = self.k_cache.shape[2]
        k, v = self.append_to_cache(k, v)
        return self.head(x, q, k, v, past)


class _DecodeMaskMisaligned(KVCacheLM):
    def causal_mask(self, queries: int, keys: int, past: int) -> torch.Tensor:
        return super().causal_mask(queries, keys, 0)  # query 0 sees key 0 only


class _CacheKeptAcrossPrefill(KVCacheLM):
    def prefill(self, idx: torch.Tensor) -> torch.Tensor:
        return self.extend(idx)


class _PositionsNotReset(KVCacheLM):
    """A position counter that prefill does not set back to 0: a new sequence's positions
    continue from the tokens of every sequence before it."""

    def __init__(self, vocab_size: int, block_size: int, n_embd: int, n_head: int) -> None:
        super().__init__(vocab_size, block_size, n_embd, n_head)
        self.position = 0

    def extend(self, idx: torch.Tensor) -> torch.Tensor:
        past = 0 if self.k_cache is None else self.k_cache.shape[2]
        x = self.embed(idx, start=self.position)
        self.position += idx.shape[1]
        q, k, v = self.qkv(x)
        k, v = self.append_to_cache(k, v)
        return self.head(x, q, k, v, past)


class _NoCausalMask(KVCacheLM):
    def causal_mask(self, queries: int, keys: int, past: int) -> torch.Tensor:
        return torch.ones(queries, keys, dtype=torch.bool)


class _MissingScaling(KVCacheLM):
    def qkv(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        q, k, v = super().qkv(x)
        return q * math.sqrt(q.shape[-1]), k, v  # cancels the 1/sqrt(hs)


VARIANTS = (
    WrongVariant(
        code="cache-not-used",
        message="Your decode matches a new token that attends to itself alone: its keys and "
        "values must be concatenated after the cached ones (along the time axis) and the "
        "query must attend to all of them.",
        entry=_CacheNotUsed,
    ),
    WrongVariant(
        code="cache-not-appended",
        message="Your decode matches a cache that never grows past the prompt: after attending, "
        "store the concatenated keys and values back in the cache, so that the next token "
        "sees this one too.",
        entry=_CacheNotAppended,
    ),
    WrongVariant(
        code="positions-restart",
        message="Your decode matches a new token embedded at position 0: its position is the "
        "number of tokens already in the cache (the prompt's length, then one more per "
        "decode), so wpe must be looked up there.",
        entry=_PositionsRestart,
    ),
    WrongVariant(
        code="decode-mask-misaligned",
        message="Your decode matches a causal mask aligned to the top-left corner: with one "
        "query and many keys it lets the new token see only the first key (is_causal=True "
        "in scaled_dot_product_attention does this when queries and keys differ in number). "
        "The new token sits at the last position: it may attend to every cached key and "
        "itself, so decode needs no mask at all.",
        entry=_DecodeMaskMisaligned,
    ),
    WrongVariant(
        code="cache-kept-across-prefill",
        message="Your second prefill matches a prompt appended to the previous sequence's "
        "cache: prefill starts a new sequence, so empty the cache first (and count "
        "positions from 0 again).",
        entry=_CacheKeptAcrossPrefill,
    ),
    WrongVariant(
        code="positions-not-reset",
        message="Your second prefill matches a new sequence whose positions continue from the "
        "previous one's: the cache was emptied, but the position count was not. A new "
        "sequence starts at position 0.",
        entry=_PositionsNotReset,
    ),
    WrongVariant(
        code="no-causal-mask",
        message="Your logits match attention without the causal mask: position i must not "
        "attend to later positions. Mask the scores above the diagonal with -inf before the "
        "softmax in forward and prefill.",
        entry=_NoCausalMask,
    ),
    WrongVariant(
        code="missing-scaling",
        message="Your logits match attention without the 1/sqrt(d) scaling: divide the scores "
        "q @ k^T by the square root of the head size before the softmax.",
        entry=_MissingScaling,
    ),
)
