import torch
import torch.nn as nn
import torch.nn.functional as F


class Head(nn.Module):
    def __init__(self, embedding_dim, head_size):
        super().__init__()
        torch.manual_seed(0)
        self.key = nn.Linear(embedding_dim, head_size, bias=False)
        self.query = nn.Linear(embedding_dim, head_size, bias=False)
        self.value = nn.Linear(embedding_dim, head_size, bias=False)

    def forward(self, x):
        k, q, v = self.key(x), self.query(x), self.value(x)
        weights = q @ k.transpose(-2, -1) * k.shape[-1] ** -0.5
        weights = F.softmax(weights, dim=-1)
        return weights @ v


class MultiHeadedSelfAttention(nn.Module):
    def __init__(self, embedding_dim: int, attention_dim: int, num_heads: int):
        super().__init__()
        torch.manual_seed(0)
        head_size = attention_dim // num_heads
        self.heads = nn.ModuleList([Head(embedding_dim, head_size) for _ in range(num_heads)])
        self.proj = nn.Linear(attention_dim, attention_dim)

    def forward(self, embedded: torch.Tensor) -> torch.Tensor:
        out = torch.cat([h(embedded) for h in self.heads], dim=-1)
        return torch.round(self.proj(out), decimals=4)
