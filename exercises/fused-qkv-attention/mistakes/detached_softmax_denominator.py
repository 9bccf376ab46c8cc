# Style: a hand-written stable softmax whose normaliser is .detach()ed ("the sum is just a constant"), shapes in comments.
import math

import torch
import torch.nn as nn


def scaled_dot_product(q, k, v, mask=None):
    # q, k, v: (B, h, T, d)
    scores = q @ k.transpose(-1, -2) / math.sqrt(q.size(-1))  # (B, h, T, T)
    if mask is not None:
        scores = scores + mask
    e = torch.exp(scores - scores.max(dim=-1, keepdim=True).values)
    attention = e / e.sum(dim=-1, keepdim=True).detach()  # the sum is just a constant
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
        B, T, _ = x.shape  # (B, T, input_dim)
        qkv = self.qkv_layer(x).view(B, T, self.num_heads, 3 * self.head_dim)  # (B, T, h, 3d)
        q, k, v = qkv.transpose(1, 2).chunk(3, dim=-1)  # each (B, h, T, d)
        values, _ = scaled_dot_product(q, k, v, mask)  # (B, h, T, d)
        values = values.transpose(1, 2).reshape(B, T, self.d_model)  # (B, T, d_model)
        return self.linear_layer(values)
