# Style: the additive mask turned into a boolean and applied with masked_fill(-1e9), as many tutorials write it.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def scaled_dot_product(q, k, v, mask=None):
    scores = q @ k.transpose(-1, -2) / math.sqrt(q.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == float("-inf"), -1e9)
    attention = F.softmax(scores, dim=-1)
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

    def forward(self, x, mask=None):
        B, T, _ = x.size()
        qkv = self.qkv_layer(x).reshape(B, T, self.num_heads, 3 * self.head_dim).permute(0, 2, 1, 3)
        q, k, v = qkv.chunk(3, dim=-1)
        values, _ = scaled_dot_product(q, k, v, mask)
        values = values.permute(0, 2, 1, 3).contiguous().view(B, T, self.d_model)
        return self.linear_layer(values)
