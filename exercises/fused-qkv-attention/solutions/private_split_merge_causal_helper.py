# Style: private helpers: _split_heads/_merge_heads methods, self._cache = None keeping the last attention, a module-level _causal_mask(T) used by the demo.
from __future__ import annotations

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def _causal_mask(T):
    return torch.triu(torch.full((T, T), float("-inf")), diagonal=1)


def scaled_dot_product(q, k, v, mask=None):
    # q, k, v: (batch, num_heads, seq_len, head_dim)
    scaled = q @ k.transpose(-1, -2) / math.sqrt(q.size(-1))
    if mask is not None:
        scaled = scaled + mask
    attention = F.softmax(scaled, dim=-1)
    return attention @ v, attention


class MultiheadAttention(nn.Module):

    def __init__(self, input_dim, d_model, num_heads):
        super().__init__()
        self.input_dim = input_dim
        self.d_model = d_model
        self.num_heads = num_heads
        self.head_dim = d_model // num_heads
        self.qkv_layer = nn.Linear(input_dim, 3 * d_model)
        self.linear_layer = nn.Linear(d_model, d_model)
        self._cache = None

    def _split_heads(self, qkv):
        B, T, _ = qkv.shape
        qkv = qkv.view(B, T, self.num_heads, 3 * self.head_dim).transpose(1, 2)
        return qkv.chunk(3, dim=-1)

    def _merge_heads(self, values):
        B, H, T, D = values.shape
        return values.transpose(1, 2).contiguous().view(B, T, H * D)

    def forward(self, x, mask=None):
        q, k, v = self._split_heads(self.qkv_layer(x))
        values, attention = scaled_dot_product(q, k, v, mask)
        self._cache = attention.detach()
        return self.linear_layer(self._merge_heads(values))


if __name__ == "__main__":
    model = MultiheadAttention(input_dim=1024, d_model=512, num_heads=8)
    x = torch.randn(30, 5, 1024)
    print(model(x).shape)
    print(model(x, _causal_mask(5)).shape)
    print(model._cache[0, 0, 0])  # [1, 0, 0, 0, 0]
