# Style: notebook leftovers: unused `import numpy as np`, __all__, print(self) in the constructor, print(out) in forward, and an `if __name__ == "__main__":` demo.
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

__all__ = ["SelfAttention", "MultiHeadAttention"]


class SelfAttention(nn.Module):
    """One attention head: bidirectional scaled dot-product self-attention."""

    def __init__(self, embedding_dim: int, head_dim: int):
        super().__init__()
        self.query = nn.Linear(embedding_dim, head_dim)
        self.key = nn.Linear(embedding_dim, head_dim)
        self.value = nn.Linear(embedding_dim, head_dim)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        Q, K, V = self.query(x), self.key(x), self.value(x)
        dk = K.size(-1)
        attn_weights = F.softmax(Q @ K.transpose(-2, -1) / math.sqrt(dk), dim=-1)
        return attn_weights @ V, attn_weights


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
        print(self)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        outputs = [head(x) for head in self.heads]
        out = torch.cat([o for o, _ in outputs], dim=-1)
        out = self.dropout(self.output_proj(out))
        print(out)
        attention = torch.stack([a for _, a in outputs], dim=1)
        return out, attention


if __name__ == "__main__":
    model = MultiHeadAttention(embedding_dim=8, num_heads=2).eval()
    x = torch.randn(1, 4, 8)
    output, attention = model(x)
    print(output.shape, attention.shape)
    print(attention.sum(dim=-1))
    print([(name, tuple(p.shape)) for name, p in model.named_parameters()])
