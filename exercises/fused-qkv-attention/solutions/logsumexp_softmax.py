# Style: softmax in log space, exp(scores - torch.logsumexp(scores)), the mask added first; stable at any scale.
import math

import torch
import torch.nn as nn


def scaled_dot_product(q, k, v, mask=None):
    scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores + mask
    attention = torch.exp(scores - torch.logsumexp(scores, dim=-1, keepdim=True))
    return torch.matmul(attention, v), attention


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
        batch_size, sequence_length, _ = x.shape
        qkv = self.qkv_layer(x)
        qkv = qkv.reshape(batch_size, sequence_length, self.num_heads, 3 * self.head_dim)
        q, k, v = qkv.permute(0, 2, 1, 3).chunk(3, dim=-1)
        values, _ = scaled_dot_product(q, k, v, mask)
        values = values.permute(0, 2, 1, 3).reshape(batch_size, sequence_length, self.d_model)
        return self.linear_layer(values)
