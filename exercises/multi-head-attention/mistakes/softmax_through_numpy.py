# Style: the softmax done in NumPy as in the course's first notebook (.detach().numpy(), np.exp, torch.from_numpy back), the starter otherwise.
import math

import numpy as np
import torch
import torch.nn as nn


def softmax(scores: torch.Tensor) -> torch.Tensor:
    s = scores.detach().numpy()
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return torch.from_numpy(e / e.sum(axis=-1, keepdims=True))


class SelfAttention(nn.Module):
    """One attention head: bidirectional scaled dot-product self-attention."""

    def __init__(self, embedding_dim: int, head_dim: int):
        super().__init__()
        self.query = nn.Linear(embedding_dim, head_dim)
        self.key = nn.Linear(embedding_dim, head_dim)
        self.value = nn.Linear(embedding_dim, head_dim)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        Q, K, V = self.query(x), self.key(x), self.value(x)
        attention = softmax(Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1]))
        return attention @ V, attention


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
        outs, weights = [], []
        for head in self.heads:
            out, attn = head(x)
            outs.append(out)
            weights.append(attn)
        output = self.dropout(self.output_proj(torch.cat(outs, dim=-1)))
        return output, torch.stack(weights, dim=1)
