"""Multi-head attention with the parameters and results of `nn.MultiheadAttention`.

Equivalent to `nn.MultiheadAttention(embed_dim, num_heads, batch_first=True)` in eval mode,
with its defaults (biases on, no extra key/value biases, key and value of size embed_dim),
called as `attn(query, key, value)`: it returns the attention output and the attention weights
averaged over the heads.

    in_proj_weight = [W^Q; W^K; W^V]  (3E, E)      in_proj_bias = [b^Q; b^K; b^V]  (3E,)
    head_i = softmax(Q_i K_i^T / sqrt(E / h)) V_i  output = Concat(head_1..head_h) W^O^T + b^O

Shapes: B is the batch size, T the number of queries, S the number of keys and values, E the
embedding dimension.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from grader.variants import WrongVariant


class MultiheadAttentionFromScratch(nn.Module):
    def __init__(self, embed_dim: int, num_heads: int) -> None:
        super().__init__()
        assert embed_dim % num_heads == 0, "embed_dim must be divisible by num_heads"
        self.embed_dim = embed_dim
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        # The built-in's names and initialisation.
        self.in_proj_weight = nn.Parameter(torch.empty(3 * embed_dim, embed_dim))
        self.in_proj_bias = nn.Parameter(torch.zeros(3 * embed_dim))
        self.out_proj = nn.Linear(embed_dim, embed_dim)
        nn.init.xavier_uniform_(self.in_proj_weight)
        nn.init.zeros_(self.out_proj.bias)

    def forward(
        self, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        # query: (B, T, E); key, value: (B, S, E)
        w_q, w_k, w_v = self.in_proj_blocks()  # each (E, E)
        b_q, b_k, b_v = self.in_proj_bias.chunk(3)  # each (E,)
        q = self.split_heads(F.linear(query, w_q, b_q))  # (B, nh, T, head_dim)
        k = self.split_heads(F.linear(key, w_k, b_k))  # (B, nh, S, head_dim)
        v = self.split_heads(F.linear(value, w_v, b_v))  # (B, nh, S, head_dim)
        scores = q @ k.transpose(-2, -1) / self.scale()  # (B, nh, T, S)
        attention = F.softmax(scores, dim=-1)  # (B, nh, T, S)
        y = attention @ v  # (B, nh, T, head_dim)
        B, _, T, _ = y.shape
        y = y.transpose(1, 2).reshape(B, T, self.embed_dim)  # (B, T, nh * head_dim) = (B, T, E)
        return self.results(y, attention)

    # The steps below are methods for the known mistakes to change.
    def in_proj_blocks(self) -> tuple[torch.Tensor, ...]:
        return self.in_proj_weight.chunk(3)  # W^Q, W^K, W^V

    def scale(self) -> float:
        return math.sqrt(self.head_dim)

    def results(
        self, y: torch.Tensor, attention: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        return self.out_proj(y), attention.mean(dim=1)  # (B, T, E), (B, T, S)

    def split_heads(self, x: torch.Tensor) -> torch.Tensor:
        B, L, _ = x.shape  # x: (B, L, E), L = T or S
        x = x.view(B, L, self.num_heads, self.head_dim)  # (B, L, nh, head_dim)
        return x.transpose(1, 2)  # (B, nh, L, head_dim)


# --- Known mistakes -------------------------------------------------------------------------


class _MissingScaling(MultiheadAttentionFromScratch):
    def scale(self) -> float:
        return 1.0


class _QueryAndKeySwapped(MultiheadAttentionFromScratch):
    def in_proj_blocks(self) -> tuple[torch.Tensor, ...]:
        w_q, w_k, w_v = super().in_proj_blocks()
        return w_k, w_q, w_v


class _WeightsPerHead(MultiheadAttentionFromScratch):
    def results(
        self, y: torch.Tensor, attention: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        return self.out_proj(y), attention  # (B, nh, T, S)


class _NoOutputProjection(MultiheadAttentionFromScratch):
    def results(
        self, y: torch.Tensor, attention: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        return y, attention.mean(dim=1)


VARIANTS = (
    WrongVariant(
        code="missing-scaling",
        message="Your output matches attention without the 1/sqrt(head_dim) scaling: divide the "
        "scores q @ k^T by the square root of head_dim before the softmax.",
        entry=_MissingScaling,
    ),
    WrongVariant(
        code="query-and-key-swapped",
        message="Your output matches the queries made with in_proj_weight's second block and the "
        "keys with its first: the built-in stacks the blocks as queries, keys, values, in that "
        "order.",
        entry=_QueryAndKeySwapped,
    ),
    WrongVariant(
        code="weights-per-head",
        message="Your attention weights are each head's, (B, num_heads, T, S): the built-in "
        "returns them averaged over the heads, (B, T, S), by default.",
        entry=_WeightsPerHead,
    ),
    WrongVariant(
        code="no-output-projection",
        message="Your output matches the concatenated heads without the output projection: pass "
        "them through out_proj before returning them, as the built-in does.",
        entry=_NoOutputProjection,
    ),
)
