# Style: typing.List/Tuple annotations, super(Cls, self).__init__(), zip(*...) to unpack the heads' results.
from typing import List, Tuple

import math
import torch
import torch.nn as nn
import torch.nn.functional as F


class SelfAttention(nn.Module):

    def __init__(self, embedding_dim: int, head_dim: int):
        super(SelfAttention, self).__init__()
        self.query = nn.Linear(embedding_dim, head_dim, bias=True)
        self.key = nn.Linear(embedding_dim, head_dim, bias=True)
        self.value = nn.Linear(embedding_dim, head_dim, bias=True)
        self.scale = 1.0 / math.sqrt(head_dim)

    def forward(self, x: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        q, k, v = self.query(x), self.key(x), self.value(x)
        w = torch.softmax(q @ k.transpose(1, 2) * self.scale, dim=-1)
        return w @ v, w


class MultiHeadAttention(nn.Module):

    def __init__(self, embedding_dim: int, num_heads: int, dropout: float = 0.1):
        super(MultiHeadAttention, self).__init__()
        assert embedding_dim % num_heads == 0
        self.num_heads = num_heads
        self.head_dim = embedding_dim // num_heads
        self.embedding_dim = embedding_dim
        heads: List[SelfAttention] = [SelfAttention(embedding_dim, self.head_dim) for _ in range(num_heads)]
        self.heads = nn.ModuleList(heads)
        self.output_proj = nn.Linear(embedding_dim, embedding_dim)
        self.dropout = nn.Dropout(p=dropout)

    def forward(self, x: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        results: List[Tuple[torch.Tensor, torch.Tensor]] = [head(x) for head in self.heads]
        outs, weights = zip(*results)
        concat = torch.cat(list(outs), dim=2)
        return self.dropout(self.output_proj(concat)), torch.stack(list(weights), dim=1)
