"""Multi-head attention built from independent self-attention heads (Vaswani et al., 2017).

    MultiHead(X) = Concat(head_1, ..., head_h) W^O,   head_i = softmax(Q_i K_i^T / sqrt(d)) V_i

Each head is a `SelfAttention` module with its own query, key and value projections of size
head_dim = embedding_dim // num_heads; attention is bidirectional (no mask). The module returns
the projected output and the attention weights of every head, stacked.

Shapes: B is the batch size, T the sequence length, C the embedding dimension.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from grader.variants import WrongVariant


class SelfAttention(nn.Module):
    """One head: bidirectional scaled dot-product self-attention."""

    def __init__(self, embedding_dim: int, head_dim: int) -> None:
        super().__init__()
        self.query = nn.Linear(embedding_dim, head_dim)
        self.key = nn.Linear(embedding_dim, head_dim)
        self.value = nn.Linear(embedding_dim, head_dim)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        # x: (B, T, C)
        q, k, v = self.query(x), self.key(x), self.value(x)  # each (B, T, head_dim)
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))  # (B, T, T)
        attention = F.softmax(scores, dim=-1)  # (B, T, T), each row sums to 1
        return attention @ v, attention  # (B, T, head_dim), (B, T, T)


class MultiHeadAttention(nn.Module):
    def __init__(self, embedding_dim: int, num_heads: int, dropout: float = 0.1) -> None:
        super().__init__()
        assert embedding_dim % num_heads == 0, "embedding_dim must be divisible by num_heads"
        self.num_heads = num_heads
        self.head_dim = embedding_dim // num_heads
        self.embedding_dim = embedding_dim
        self.heads = nn.ModuleList(
            SelfAttention(embedding_dim, self.head_dim) for _ in range(num_heads)
        )
        self.output_proj = nn.Linear(embedding_dim, embedding_dim)  # W^O
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        # x: (B, T, C)
        head_outputs, head_attentions = zip(*(head(x) for head in self.heads), strict=True)
        concatenated = torch.cat(head_outputs, dim=-1)  # (B, T, num_heads * head_dim) = (B, T, C)
        output = self.dropout(self.output_proj(concatenated))  # (B, T, C)
        attention = torch.stack(head_attentions, dim=1)  # (B, num_heads, T, T)
        return output, attention


# --- Known mistakes -------------------------------------------------------------------------
# `_Head` exposes the head's steps as class attributes; each mistake is a head that changes one,
# put in place of the reference's heads (same parameter names, so the grader's weights load).


class _Head(SelfAttention):
    scaled = True
    causal = False
    softmax_dim = -1

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        q, k, v = self.query(x), self.key(x), self.value(x)  # each (B, T, head_dim)
        scores = q @ k.transpose(-2, -1)  # (B, T, T)
        if self.scaled:
            scores = scores / math.sqrt(q.size(-1))
        if self.causal:
            T = scores.size(-1)
            scores = scores.masked_fill(torch.tril(torch.ones(T, T)) == 0, float("-inf"))
        attention = F.softmax(scores, dim=self.softmax_dim)
        return attention @ v, attention


class _UnscaledHead(_Head):
    scaled = False


class _CausalHead(_Head):
    causal = True


class _SoftmaxOverQueriesHead(_Head):
    softmax_dim = -2  # (B, T queries, T keys): each key's column sums to 1


class _Variant(MultiHeadAttention):
    head_type: type[_Head] = _Head

    def __init__(self, embedding_dim: int, num_heads: int, dropout: float = 0.1) -> None:
        super().__init__(embedding_dim, num_heads, dropout)
        self.heads = nn.ModuleList(
            self.head_type(embedding_dim, self.head_dim) for _ in range(num_heads)
        )


class _MissingScaling(_Variant):
    head_type = _UnscaledHead


class _CausalMask(_Variant):
    head_type = _CausalHead


class _SoftmaxOverQueries(_Variant):
    head_type = _SoftmaxOverQueriesHead


class _WeightsStackedLast(MultiHeadAttention):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        output, attention = super().forward(x)
        return output, attention.permute(0, 2, 3, 1)  # (B, T, T, num_heads)


VARIANTS = (
    WrongVariant(
        code="missing-scaling",
        message="Your output matches attention without the 1/sqrt(d) scaling: divide each "
        "head's scores q @ k^T by the square root of head_dim before the softmax.",
        entry=_MissingScaling,
    ),
    WrongVariant(
        code="causal-mask",
        message="Your output matches causal (masked) attention: the heads of this exercise are "
        "bidirectional, every position attends to every position. Remove the mask.",
        entry=_CausalMask,
    ),
    WrongVariant(
        code="softmax-over-queries",
        message="Your output matches a softmax over the queries' axis (dim=1 of the (B, T, T) "
        "scores): each query's weights must sum to 1 over the keys, the last axis (dim=-1).",
        entry=_SoftmaxOverQueries,
    ),
    WrongVariant(
        code="weights-stacked-last",
        message="Your attention weights have the heads on the last axis, (B, T, T, num_heads): "
        "stack the heads' weights along a new axis 1, so that they read (B, num_heads, T, T).",
        entry=_WeightsStackedLast,
    ),
)
