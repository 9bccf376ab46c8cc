# Style: softmax as exp(s - log(sum(exp(s)))), the log-sum-exp written out by hand without the max shift.
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

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        q, k, v = self.query(x), self.key(x), self.value(x)
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
        log_norm = torch.log(torch.exp(scores).sum(dim=-1, keepdim=True))
        attention = torch.exp(scores - log_norm)
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
        head_outputs = []
        attention_weights = []
        for head in self.heads:
            out, attn = head(x)
            head_outputs.append(out)
            attention_weights.append(attn)
        output = self.dropout(self.output_proj(torch.cat(head_outputs, dim=-1)))
        return output, torch.stack(attention_weights, dim=1)
