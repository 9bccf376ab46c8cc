# Style: **kwargs in the constructor, output and attention preallocated (torch.zeros / torch.empty) and filled with slice assignment per head.
import torch
import torch.nn as nn
import torch.nn.functional as F


class SelfAttention(nn.Module):

    def __init__(self, embedding_dim: int, head_dim: int, **kwargs):
        super().__init__()
        self.query = nn.Linear(embedding_dim, head_dim)
        self.key = nn.Linear(embedding_dim, head_dim)
        self.value = nn.Linear(embedding_dim, head_dim)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        q = self.query(x)
        k = self.key(x)
        v = self.value(x)
        scores = q.bmm(k.permute(0, 2, 1)) * (q.shape[-1] ** -0.5)
        weights = scores.softmax(dim=-1)
        return weights.bmm(v), weights


class MultiHeadAttention(nn.Module):

    def __init__(self, embedding_dim: int, num_heads: int, dropout: float = 0.1, **kwargs):
        super().__init__()
        assert embedding_dim % num_heads == 0
        self.num_heads = num_heads
        self.head_dim = embedding_dim // num_heads
        self.embedding_dim = embedding_dim
        self.heads = nn.ModuleList()
        for _ in range(num_heads):
            self.heads.append(SelfAttention(embedding_dim, self.head_dim, **kwargs))
        self.output_proj = nn.Linear(embedding_dim, embedding_dim)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        B, T, C = x.shape
        d = self.head_dim
        concat = torch.zeros(B, T, C)
        attention = torch.empty(B, self.num_heads, T, T)
        for i, head in enumerate(self.heads):
            out, w = head(x)
            concat[:, :, i * d:(i + 1) * d] = out
            attention[:, i] = w
        return self.dropout(self.output_proj(concat)), attention
