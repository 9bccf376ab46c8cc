# Style: the head's 1/sqrt(d) kept in a register_buffer, and a hand-written softmax that subtracts the row max first.
import math

import torch
import torch.nn as nn


class SelfAttention(nn.Module):
    """One attention head: bidirectional scaled dot-product self-attention."""

    def __init__(self, embedding_dim: int, head_dim: int):
        super().__init__()
        self.query = nn.Linear(embedding_dim, head_dim)
        self.key = nn.Linear(embedding_dim, head_dim)
        self.value = nn.Linear(embedding_dim, head_dim)
        self.register_buffer("scale", torch.tensor(1.0 / math.sqrt(head_dim)))

    @staticmethod
    def softmax(scores: torch.Tensor) -> torch.Tensor:
        shifted = scores - scores.max(dim=-1, keepdim=True).values
        e = shifted.exp()
        return e / e.sum(dim=-1, keepdim=True)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        q, k, v = self.query(x), self.key(x), self.value(x)
        attention = self.softmax(q @ k.transpose(-2, -1) * self.scale)
        return attention @ v, attention


class MultiHeadAttention(nn.Module):
    # 1. Run h independent attention heads
    # 2. Concatenate their outputs
    # 3. Project back to the embedding dimension

    def __init__(self, embedding_dim: int, num_heads: int, dropout: float = 0.1):
        super().__init__()
        # embedding_dim must be divisible by num_heads
        assert embedding_dim % num_heads == 0
        self.num_heads = num_heads
        self.head_dim = embedding_dim // num_heads
        self.embedding_dim = embedding_dim

        # create multiple attention heads
        self.heads = nn.ModuleList([
            SelfAttention(embedding_dim, self.head_dim)
            for _ in range(num_heads)
        ])

        # output projection
        self.output_proj = nn.Linear(embedding_dim, embedding_dim)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        outs, attns = [], []
        for head in self.heads:
            out, attn = head(x)
            outs.append(out)
            attns.append(attn)
        output = self.dropout(self.output_proj(torch.cat(outs, dim=-1)))
        return output, torch.stack(attns, dim=1)
