"""A pre-norm Transformer block (GPT-2's): each sublayer reads a layer-normalised copy of the
residual stream and adds its result back to the stream.

    x = x + attn(ln1(x))       causal multi-head self-attention, optional padding mask
    x = x + ffn(ln2(x))        Linear(d_model, ffn_dim) -> exact GELU -> Linear(ffn_dim, d_model)

The attention projects queries, keys and values with one fused layer `qkv`, laid out in three
blocks of d_model features (q, then k, then v), each split into num_heads heads of
head_dim = d_model // num_heads features; `proj` mixes the merged heads. Query t attends to key s
when s <= t and, where a `keep` mask is given, keep[b, s] is True (a real token, not padding).

Shapes: B is the batch size, T the sequence length, D = d_model.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn

from grader.variants import LARGE_NEGATIVE_FILL, WrongVariant


class CausalSelfAttention(nn.Module):
    def __init__(self, d_model: int, num_heads: int) -> None:
        super().__init__()
        assert d_model % num_heads == 0, "d_model must be divisible by num_heads"
        self.num_heads = num_heads
        self.head_dim = d_model // num_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)

    def forward(self, x: torch.Tensor, keep: torch.Tensor | None = None) -> torch.Tensor:
        B, T, D = x.shape  # x: (B, T, D)
        q, k, v = (self.split_heads(part) for part in self.qkv(x).split(D, dim=-1))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)  # (B, nh, T, T)
        weights = self.attention_weights(scores, allowed_keys(T, keep, x.device))  # (B, nh, T, T)
        values = (weights @ v).transpose(1, 2).reshape(B, T, D)  # (B, T, nh * head_dim)
        out: torch.Tensor = self.proj(values)
        return out

    def split_heads(self, part: torch.Tensor) -> torch.Tensor:
        B, T, _ = part.shape  # part: (B, T, D)
        return part.view(B, T, self.num_heads, self.head_dim).transpose(1, 2)  # (B, nh, T, hd)

    def attention_weights(self, scores: torch.Tensor, allowed: torch.Tensor) -> torch.Tensor:
        return scores.masked_fill(~allowed, float("-inf")).softmax(dim=-1)


def allowed_keys(length: int, keep: torch.Tensor | None, device: torch.device) -> torch.Tensor:
    """(B or 1, 1, T, T) bool, T = length: query t may attend to key s."""
    causal = torch.ones(length, length, dtype=torch.bool, device=device).tril()  # s <= t
    if keep is None:
        return causal[None, None]
    return causal[None, None] & keep[:, None, None, :]  # keep: (B, T) over the keys


class FeedForward(nn.Module):
    def __init__(self, d_model: int, ffn_dim: int) -> None:
        super().__init__()
        self.fc1 = nn.Linear(d_model, ffn_dim)
        self.fc2 = nn.Linear(ffn_dim, d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = self.fc2(self.activation(self.fc1(x)))  # (B, T, D)
        return out

    def activation(self, h: torch.Tensor) -> torch.Tensor:
        return F.gelu(h)  # exact: h * Phi(h), with erf


class TransformerBlock(nn.Module):
    # What each part computes, for the type checker (a module's __call__ returns Any).
    ln1: Callable[[torch.Tensor], torch.Tensor]
    ln2: Callable[[torch.Tensor], torch.Tensor]
    attn: Callable[[torch.Tensor, torch.Tensor | None], torch.Tensor]
    ffn: Callable[[torch.Tensor], torch.Tensor]

    def __init__(self, d_model: int, num_heads: int, ffn_dim: int) -> None:
        super().__init__()
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = self.attention_type()(d_model, num_heads)
        self.ln2 = nn.LayerNorm(d_model)
        self.ffn = self.feed_forward_type()(d_model, ffn_dim)

    def forward(self, x: torch.Tensor, keep: torch.Tensor | None = None) -> torch.Tensor:
        x = x + self.attn(self.ln1(x), keep)  # (B, T, D)
        return x + self.ffn(self.ln2(x))  # (B, T, D)

    # The sublayers' types, which the known mistakes below replace.
    def attention_type(self) -> type[CausalSelfAttention]:
        return CausalSelfAttention

    def feed_forward_type(self) -> type[FeedForward]:
        return FeedForward


# --- Known mistakes -------------------------------------------------------------------------


class _PostNorm(TransformerBlock):
    def forward(self, x: torch.Tensor, keep: torch.Tensor | None = None) -> torch.Tensor:
        x = self.ln1(x + self.attn(x, keep))
        return self.ln2(x + self.ffn(x))


class _ResidualAroundNorm(TransformerBlock):
    def forward(self, x: torch.Tensor, keep: torch.Tensor | None = None) -> torch.Tensor:
        h = self.ln1(x)
        x = h + self.attn(h, keep)
        h = self.ln2(x)
        return h + self.ffn(h)


class _NoAttentionResidual(TransformerBlock):
    def forward(self, x: torch.Tensor, keep: torch.Tensor | None = None) -> torch.Tensor:
        x = self.attn(self.ln1(x), keep)
        return x + self.ffn(self.ln2(x))


class _NoFeedForwardResidual(TransformerBlock):
    def forward(self, x: torch.Tensor, keep: torch.Tensor | None = None) -> torch.Tensor:
        x = x + self.attn(self.ln1(x), keep)
        return self.ffn(self.ln2(x))


class _NoCausalAttention(CausalSelfAttention):
    def attention_weights(self, scores: torch.Tensor, allowed: torch.Tensor) -> torch.Tensor:
        padding_only = allowed[..., -1:, :]  # the last query's row: every kept key
        return super().attention_weights(scores, padding_only)


class _NoCausalMask(TransformerBlock):
    def attention_type(self) -> type[CausalSelfAttention]:
        return _NoCausalAttention


class _KeepIgnoredAttention(CausalSelfAttention):
    def forward(self, x: torch.Tensor, keep: torch.Tensor | None = None) -> torch.Tensor:
        return super().forward(x)


class _KeepIgnored(TransformerBlock):
    def attention_type(self) -> type[CausalSelfAttention]:
        return _KeepIgnoredAttention


class _MaskAfterSoftmaxAttention(CausalSelfAttention):
    def attention_weights(self, scores: torch.Tensor, allowed: torch.Tensor) -> torch.Tensor:
        return scores.softmax(dim=-1) * allowed  # rows no longer sum to 1


class _MaskAfterSoftmax(TransformerBlock):
    def attention_type(self) -> type[CausalSelfAttention]:
        return _MaskAfterSoftmaxAttention


class _UnscaledAttention(CausalSelfAttention):
    def attention_weights(self, scores: torch.Tensor, allowed: torch.Tensor) -> torch.Tensor:
        return super().attention_weights(scores * math.sqrt(self.head_dim), allowed)


class _MissingScaling(TransformerBlock):
    def attention_type(self) -> type[CausalSelfAttention]:
        return _UnscaledAttention


def _keep_on_queries(fill: float) -> type[TransformerBlock]:
    """`keep` broadcast over the queries' axis: a padded query sees no key (filled with `fill`),
    and real queries see the padding."""

    class KeepOnQueriesAttention(CausalSelfAttention):
        def attention_weights(self, scores: torch.Tensor, allowed: torch.Tensor) -> torch.Tensor:
            keep_row = allowed[..., -1:, :]  # the last query's row: every kept key, (B, 1, 1, T)
            causal = torch.ones_like(allowed[0, 0]).tril()  # (T, T)
            on_queries = causal & keep_row.transpose(-1, -2)  # (B, 1, T, T)
            return scores.masked_fill(~on_queries, fill).softmax(dim=-1)

    class KeepOnQueries(TransformerBlock):
        def attention_type(self) -> type[CausalSelfAttention]:
            return KeepOnQueriesAttention

    return KeepOnQueries


class _ReluFeedForward(FeedForward):
    def activation(self, h: torch.Tensor) -> torch.Tensor:
        return F.relu(h)


class _Relu(TransformerBlock):
    def feed_forward_type(self) -> type[FeedForward]:
        return _ReluFeedForward


VARIANTS = (
    WrongVariant(
        code="post-norm",
        message="Your output matches a post-norm block, x = ln(x + sublayer(x)), as in the "
        "original Transformer. This block is pre-norm: each sublayer reads ln(x) and its result "
        "is added to x itself, x = x + sublayer(ln(x)), with no normalisation after the sum.",
        entry=_PostNorm,
    ),
    WrongVariant(
        code="residual-around-norm",
        message="Your output matches adding each sublayer's result to the normalised x, "
        "h = ln(x); x = h + sublayer(h). The residual stream must carry x itself: "
        "x = x + sublayer(ln(x)).",
        entry=_ResidualAroundNorm,
    ),
    WrongVariant(
        code="missing-attention-residual",
        message="Your output matches the block without the attention's residual connection: "
        "add the attention's output to x, x = x + attn(ln1(x)), before the feed-forward part.",
        entry=_NoAttentionResidual,
    ),
    WrongVariant(
        code="missing-ffn-residual",
        message="Your output matches the block without the feed-forward's residual connection: "
        "return x + ffn(ln2(x)), not ffn(ln2(x)).",
        entry=_NoFeedForwardResidual,
    ),
    WrongVariant(
        code="no-causal-mask",
        message="Your output matches attention without the causal mask: every token sees the "
        "later ones. Mask the scores above the diagonal (key s > query t) with -inf before the "
        "softmax, together with the padding mask.",
        entry=_NoCausalMask,
    ),
    WrongVariant(
        code="keep-mask-ignored",
        message="Your output matches ignoring `keep`: tokens attend to padding. Where keep[b, s] "
        "is False, no query of sequence b may attend to key s: set those scores to -inf before "
        "the softmax, as the causal mask does.",
        entry=_KeepIgnored,
    ),
    # Written with -inf, this mistake leaves the padded tokens NaN and the real ones right: no
    # evidence of anything (`grader.diagnosis`). A large negative fill makes those rows uniform.
    WrongVariant(
        code="keep-on-queries",
        message="Your output matches `keep` applied to the queries: each padded token attends to "
        "no key at all (its row is filled everywhere), and the real tokens still attend to the "
        "padding. keep[b, s] says whether key s of sequence b may be attended to: broadcast it "
        "over the keys' axis, the last one of the scores, so that it masks columns, not rows.",
        entry=_keep_on_queries(LARGE_NEGATIVE_FILL),
    ),
    WrongVariant(
        code="mask-after-softmax",
        message="Your output matches zeroing the masked attention weights after the softmax, so "
        "each row no longer sums to 1. Mask the scores with -inf before the softmax instead.",
        entry=_MaskAfterSoftmax,
    ),
    WrongVariant(
        code="missing-scaling",
        message="Your output matches attention without the 1/sqrt(d) scaling: divide the scores "
        "q @ k^T by the square root of head_dim before the softmax.",
        entry=_MissingScaling,
    ),
    WrongVariant(
        code="relu-instead-of-gelu",
        message="Your output matches a ReLU between the feed-forward layers. The block uses "
        "GELU (exact, with erf): F.gelu or nn.GELU().",
        entry=_Relu,
    ),
)
