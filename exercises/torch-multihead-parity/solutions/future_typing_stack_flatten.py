# Style: from __future__ import annotations, typing.Tuple/List, super(Cls, self).__init__(), per-head outputs gathered with torch.stack then flatten.
from __future__ import annotations

import math
from typing import List, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F


class MultiheadAttentionFromScratch(nn.Module):

    def __init__(self, embed_dim: int, num_heads: int) -> None:
        super(MultiheadAttentionFromScratch, self).__init__()
        self.embed_dim = embed_dim
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.in_proj_weight = nn.Parameter(torch.randn(3 * embed_dim, embed_dim) / math.sqrt(embed_dim))
        self.in_proj_bias = nn.Parameter(torch.zeros(3 * embed_dim))
        self.out_proj = nn.Linear(embed_dim, embed_dim)

    def forward(self, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        projections: List[torch.Tensor] = []
        for x, w, b in zip((query, key, value), self.in_proj_weight.chunk(3), self.in_proj_bias.chunk(3)):
            projections.append(F.linear(x, w, b))
        q, k, v = projections
        outs: List[torch.Tensor] = []
        weights: List[torch.Tensor] = []
        for qh, kh, vh in zip(q.split(self.head_dim, -1), k.split(self.head_dim, -1), v.split(self.head_dim, -1)):
            a = F.softmax(qh @ kh.transpose(-1, -2) / math.sqrt(self.head_dim), dim=-1)
            outs.append(a @ vh)
            weights.append(a)
        merged = torch.stack(outs, dim=2).flatten(start_dim=2)   # (B, T, h, d) -> (B, T, E)
        return self.out_proj(merged), torch.stack(weights, dim=1).mean(dim=1)
