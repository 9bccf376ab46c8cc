# Style: per-head loop with torch.exp(scores) / torch.exp(scores).sum(-1, keepdim=True) as the softmax, no max shift; weights averaged with sum / num_heads.
import math

import torch
import torch.nn as nn


class MultiheadAttentionFromScratch(nn.Module):

    def __init__(self, embed_dim: int, num_heads: int):
        super().__init__()
        self.embed_dim = embed_dim
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.in_proj_weight = nn.Parameter(torch.randn(3 * embed_dim, embed_dim) / math.sqrt(embed_dim))
        self.in_proj_bias = nn.Parameter(torch.zeros(3 * embed_dim))
        self.out_proj = nn.Linear(embed_dim, embed_dim)

    def forward(self, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor):
        E, d = self.embed_dim, self.head_dim
        q = query @ self.in_proj_weight[:E].T + self.in_proj_bias[:E]
        k = key @ self.in_proj_weight[E:2 * E].T + self.in_proj_bias[E:2 * E]
        v = value @ self.in_proj_weight[2 * E:].T + self.in_proj_bias[2 * E:]
        outputs, weights_sum = [], 0
        for i in range(self.num_heads):
            qi, ki, vi = q[..., i * d:(i + 1) * d], k[..., i * d:(i + 1) * d], v[..., i * d:(i + 1) * d]
            scores = torch.exp(qi @ ki.transpose(-2, -1) / math.sqrt(d))
            weights = scores / scores.sum(dim=-1, keepdim=True)
            outputs.append(weights @ vi)
            weights_sum = weights_sum + weights
        out = self.out_proj(torch.cat(outputs, dim=-1))
        return out, weights_sum / self.num_heads
