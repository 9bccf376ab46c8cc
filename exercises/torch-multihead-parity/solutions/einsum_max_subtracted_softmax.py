# Style: einsum for the projections and both attention products, and a hand-written softmax that subtracts the row max before exp.
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
        h, d = self.num_heads, self.head_dim
        w = self.in_proj_weight.view(3, h, d, self.embed_dim)
        b = self.in_proj_bias.view(3, h, 1, d)
        q = torch.einsum("bte,hde->bhtd", query, w[0]) + b[0]
        k = torch.einsum("bse,hde->bhsd", key, w[1]) + b[1]
        v = torch.einsum("bse,hde->bhsd", value, w[2]) + b[2]
        scores = torch.einsum("bhtd,bhsd->bhts", q, k) / math.sqrt(d)
        e = torch.exp(scores - scores.max(dim=-1, keepdim=True).values)
        weights = e / e.sum(dim=-1, keepdim=True)
        out = torch.einsum("bhts,bhsd->bthd", weights, v).flatten(2)
        return self.out_proj(out), weights.mean(dim=1)
