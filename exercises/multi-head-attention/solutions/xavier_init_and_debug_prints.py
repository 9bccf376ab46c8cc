# Style: torch.nn.init.xavier_uniform_/zeros_ in the constructor (the grader then loads its own weights), an nn.Softmax(dim=-1) module, and f"{x.shape=}" debug prints.
import math

import torch
import torch.nn as nn


class SelfAttention(nn.Module):

    def __init__(self, embedding_dim: int, head_dim: int):
        super().__init__()
        self.query = nn.Linear(embedding_dim, head_dim)
        self.key = nn.Linear(embedding_dim, head_dim)
        self.value = nn.Linear(embedding_dim, head_dim)
        self.softmax = nn.Softmax(dim=-1)
        for layer in (self.query, self.key, self.value):
            nn.init.xavier_uniform_(layer.weight)
            nn.init.zeros_(layer.bias)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        q = self.query(x)
        k = self.key(x)
        v = self.value(x)
        print(f"{q.shape=} {k.shape=} {v.shape=}")
        d = q.shape[-1]
        attn = self.softmax(q @ k.transpose(-2, -1) / d ** 0.5)
        print(f"{attn.shape=}")
        return attn @ v, attn


class MultiHeadAttention(nn.Module):

    def __init__(self, embedding_dim: int, num_heads: int, dropout: float = 0.1):
        super().__init__()
        assert embedding_dim % num_heads == 0
        self.num_heads = num_heads
        self.head_dim = embedding_dim // num_heads
        self.embedding_dim = embedding_dim
        self.heads = nn.ModuleList([SelfAttention(embedding_dim, self.head_dim) for _ in range(num_heads)])
        self.output_proj = nn.Linear(embedding_dim, embedding_dim)
        torch.nn.init.xavier_uniform_(self.output_proj.weight)
        torch.nn.init.constant_(self.output_proj.bias, 0.0)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        print(f"{x.shape=}")
        outs, attns = [], []
        for h in self.heads:
            o, a = h(x)
            outs.append(o)
            attns.append(a)
        y = self.dropout(self.output_proj(torch.cat(outs, dim=-1)))
        print(f"{y.shape=}")
        return y, torch.stack(attns, dim=1)
