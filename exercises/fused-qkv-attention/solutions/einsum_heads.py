# Style: einsum for the scores and the weighted sum, heads merged with einsum straight into (B, T, h, d); Optional typing on the mask.
from typing import Optional

import math
import torch
import torch.nn as nn


def scaled_dot_product(q, k, v, mask=None):
    scores = torch.einsum("bhtd,bhsd->bhts", q, k) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores + mask
    attention = torch.softmax(scores, dim=-1)
    values = torch.einsum("bhts,bhsd->bhtd", attention, v)
    return values, attention


class MultiheadAttention(nn.Module):

    def __init__(self, input_dim, d_model, num_heads):
        super().__init__()
        self.input_dim = input_dim
        self.d_model = d_model
        self.num_heads = num_heads
        self.head_dim = d_model // num_heads
        self.qkv_layer = nn.Linear(input_dim, 3 * d_model)
        self.linear_layer = nn.Linear(d_model, d_model)

    def forward(self, x: torch.Tensor, mask: Optional[torch.Tensor] = None) -> torch.Tensor:
        B, T, _ = x.shape
        qkv = self.qkv_layer(x).reshape(B, T, self.num_heads, 3 * self.head_dim)
        qkv = qkv.permute(0, 2, 1, 3)
        q, k, v = qkv.chunk(3, dim=-1)
        _, attention = scaled_dot_product(q, k, v, mask)
        merged = torch.einsum("bhts,bhsd->bthd", attention, v).reshape(B, T, self.d_model)
        return self.linear_layer(merged)
