import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class MultiheadAttentionFromScratch(nn.Module):
    def __init__(self, embed_dim: int, num_heads: int):
        super().__init__()
        self.embed_dim = embed_dim
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.in_proj_weight = nn.Parameter(torch.empty(3 * embed_dim, embed_dim))
        self.in_proj_bias = nn.Parameter(torch.empty(3 * embed_dim))
        self.out_proj = nn.Linear(embed_dim, embed_dim)

    def split_heads(self, x):
        B, L, _ = x.shape
        return x.reshape(B, L, self.num_heads, self.head_dim).transpose(1, 2)

    def forward(self, query, key, value):
        w_q, w_k, w_v = self.in_proj_weight.chunk(3)
        b_q, b_k, b_v = self.in_proj_bias.chunk(3)
        q = self.split_heads(F.linear(query, w_q, b_q))
        k = self.split_heads(F.linear(key, w_k, b_k))
        v = self.split_heads(F.linear(value, w_v, b_v))
        weights = F.softmax(q @ k.transpose(-2, -1), dim=-1)
        B, _, T, _ = q.shape
        output = (weights @ v).transpose(1, 2).reshape(B, T, self.embed_dim)
        return self.out_proj(output), weights.mean(dim=1)
