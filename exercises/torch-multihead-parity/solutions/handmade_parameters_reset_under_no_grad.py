# Style: every weight a hand-made nn.Parameter (out_proj_weight too, under an nn.Module named out_proj), filled by reset_parameters() under torch.no_grad().
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class OutProjection(nn.Module):
    def __init__(self, embed_dim):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(embed_dim, embed_dim))
        self.bias = nn.Parameter(torch.empty(embed_dim))

    def forward(self, x):
        return F.linear(x, self.weight, self.bias)


class MultiheadAttentionFromScratch(nn.Module):

    def __init__(self, embed_dim: int, num_heads: int):
        super().__init__()
        self.embed_dim = embed_dim
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.in_proj_weight = nn.Parameter(torch.empty(3 * embed_dim, embed_dim))
        self.in_proj_bias = nn.Parameter(torch.empty(3 * embed_dim))
        self.out_proj = OutProjection(embed_dim)
        self.reset_parameters()

    def reset_parameters(self):
        with torch.no_grad():
            nn.init.xavier_uniform_(self.in_proj_weight)
            self.in_proj_bias.zero_()
            nn.init.xavier_uniform_(self.out_proj.weight)
            self.out_proj.bias.zero_()

    def forward(self, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor):
        B, T, E = query.shape
        S = key.shape[1]
        q, k, v = (
            F.linear(x, w, b).reshape(B, -1, self.num_heads, self.head_dim).transpose(1, 2)
            for x, w, b in zip((query, key, value), self.in_proj_weight.chunk(3), self.in_proj_bias.chunk(3))
        )
        weights = F.softmax(q @ k.transpose(-2, -1) / math.sqrt(self.head_dim), dim=-1)  # (B, h, T, S)
        out = (weights @ v).transpose(1, 2).reshape(B, T, E)
        return self.out_proj(out), weights.mean(dim=1)
