# Style: a custom torch.autograd.Function for the scaled scores "to save memory", whose backward forgets the 1/sqrt(d) factor.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class ScaledScores(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k):
        ctx.save_for_backward(q, k)
        return q @ k.transpose(-1, -2) / math.sqrt(q.size(-1))

    @staticmethod
    def backward(ctx, grad):
        q, k = ctx.saved_tensors
        return grad @ k, grad.transpose(-1, -2) @ q


def scaled_dot_product(q, k, v, mask=None):
    scores = ScaledScores.apply(q, k)
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
        self.linear_layer = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        B, T, _ = x.shape
        qkv = self.qkv_layer(x).reshape(B, T, self.num_heads, 3 * self.head_dim).permute(0, 2, 1, 3)
        q, k, v = qkv.chunk(3, dim=-1)
        values, _ = scaled_dot_product(q, k, v, mask)
        return self.linear_layer(values.permute(0, 2, 1, 3).reshape(B, T, self.d_model))
