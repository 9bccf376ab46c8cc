# Style: the starter completed, plus the qkv bias frozen with requires_grad_(False) "so only the projection weights learn".
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def scaled_dot_product(q, k, v, mask=None):
    d_k = q.size(-1)
    scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)
    if mask is not None:
        scores = scores + mask
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
        self.qkv_layer.bias.requires_grad_(False)  # bias is just an offset, keep it fixed
        self.linear_layer = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        B, T, _ = x.shape
        qkv = self.qkv_layer(x).reshape(B, T, self.num_heads, 3 * self.head_dim).permute(0, 2, 1, 3)
        q, k, v = qkv.chunk(3, dim=-1)
        values, _ = scaled_dot_product(q, k, v, mask)
        values = values.permute(0, 2, 1, 3).reshape(B, T, self.d_model)
        return self.linear_layer(values)
