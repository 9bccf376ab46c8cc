# Style: a fine-tuning snippet pasted into the constructor: a for loop setting requires_grad = False on the output projection's parameters.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class SelfAttention(nn.Module):
    """One attention head: bidirectional scaled dot-product self-attention."""

    def __init__(self, embedding_dim: int, head_dim: int):
        super().__init__()
        self.query = nn.Linear(embedding_dim, head_dim)
        self.key = nn.Linear(embedding_dim, head_dim)
        self.value = nn.Linear(embedding_dim, head_dim)
        self.head_dim = head_dim

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        scores = torch.matmul(self.query(x), self.key(x).transpose(-2, -1)) / math.sqrt(self.head_dim)
        attention = F.softmax(scores, dim=-1)
        return torch.matmul(attention, self.value(x)), attention


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

        # keep W^O fixed, only the heads learn
        for p in self.output_proj.parameters():
            p.requires_grad = False

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        results = [head(x) for head in self.heads]
        concat = torch.cat([out for out, _ in results], dim=-1)
        output = self.dropout(self.output_proj(concat))
        return output, torch.stack([attn for _, attn in results], dim=1)
