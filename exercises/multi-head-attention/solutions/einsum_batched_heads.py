# Style: batched: the heads' nn.Linear weights stacked and applied to all heads at once with einsum (the per-head SelfAttention is kept for the parameter names).
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class SelfAttention(nn.Module):

    def __init__(self, embedding_dim: int, head_dim: int):
        super().__init__()
        self.query = nn.Linear(embedding_dim, head_dim)
        self.key = nn.Linear(embedding_dim, head_dim)
        self.value = nn.Linear(embedding_dim, head_dim)

    def forward(self, x):
        q, k, v = self.query(x), self.key(x), self.value(x)
        att = F.softmax(torch.einsum("btd,bsd->bts", q, k) / math.sqrt(q.size(-1)), dim=-1)
        return torch.einsum("bts,bsd->btd", att, v), att


class MultiHeadAttention(nn.Module):

    def __init__(self, embedding_dim: int, num_heads: int, dropout: float = 0.1):
        super().__init__()
        assert embedding_dim % num_heads == 0
        self.num_heads = num_heads
        self.head_dim = embedding_dim // num_heads
        self.embedding_dim = embedding_dim
        self.heads = nn.ModuleList([SelfAttention(embedding_dim, self.head_dim) for _ in range(num_heads)])
        self.output_proj = nn.Linear(embedding_dim, embedding_dim)
        self.dropout = nn.Dropout(dropout)

    def project(self, x, name):
        # all heads in one go: W (H, d, C), b (H, d)
        W = torch.stack([getattr(h, name).weight for h in self.heads])
        b = torch.stack([getattr(h, name).bias for h in self.heads])
        return torch.einsum("btc,hdc->bhtd", x, W) + b[None, :, None, :]

    def forward(self, x):
        B, T, C = x.shape
        q = self.project(x, "query")   # (B, H, T, d)
        k = self.project(x, "key")
        v = self.project(x, "value")
        att = F.softmax(torch.einsum("bhtd,bhsd->bhts", q, k) / math.sqrt(self.head_dim), dim=-1)
        heads = torch.einsum("bhts,bhsd->bthd", att, v).reshape(B, T, C)
        return self.dropout(self.output_proj(heads)), att
