# Style: no permute at all: a loop over the heads slicing each head's 3*head_dim block of qkv features, split into q/k/v, outputs joined with torch.cat.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def scaled_dot_product(q, k, v, mask=None):
    d_k = q.size(-1)
    scaled = q @ k.transpose(-1, -2) / d_k ** 0.5
    if mask is not None:
        scaled = scaled + mask
    attention = F.softmax(scaled, dim=-1)
    values = attention @ v
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

    def forward(self, x, mask=None):
        qkv = self.qkv_layer(x)  # (B, T, 3*d_model), laid out head by head
        D = self.head_dim
        head_values = []
        for h in range(self.num_heads):
            block = qkv[:, :, 3 * D * h: 3 * D * (h + 1)]   # this head's q|k|v
            q, k, v = torch.split(block, D, dim=-1)        # (B, T, D) each
            vals, att = scaled_dot_product(q, k, v, mask)  # mask (T, T) broadcasts over B
            head_values.append(vals)
        return self.linear_layer(torch.cat(head_values, dim=-1))
