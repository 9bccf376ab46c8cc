# Style: from __future__ import annotations, typing.List/Optional/Tuple annotations, and the old super(Cls, self).__init__() call.
from __future__ import annotations

from typing import List, Optional, Tuple

import torch
import torch.nn as nn


class MultiHeadedSelfAttention(nn.Module):

    def __init__(self, embedding_dim: int, attention_dim: int, num_heads: int) -> None:
        super(MultiHeadedSelfAttention, self).__init__()
        torch.manual_seed(0)
        self.head_size: int = attention_dim // num_heads
        self.shape_seen: Optional[Tuple[int, int, int]] = None
        heads: List[nn.Module] = []
        for _ in range(num_heads):
            heads.append(self.SingleHeadAttention(embedding_dim, self.head_size))
        self.heads = nn.ModuleList(heads)

    def forward(self, embedded: torch.Tensor) -> torch.Tensor:
        self.shape_seen = tuple(embedded.shape)
        outputs: List[torch.Tensor] = [head(embedded) for head in self.heads]
        combined: torch.Tensor = torch.cat(outputs, dim=2)
        return torch.round(combined, decimals=4)

    class SingleHeadAttention(nn.Module):
        def __init__(self, embedding_dim: int, attention_dim: int):
            super().__init__()
            torch.manual_seed(0)
            self.key_gen = nn.Linear(embedding_dim, attention_dim, bias=False)
            self.query_gen = nn.Linear(embedding_dim, attention_dim, bias=False)
            self.value_gen = nn.Linear(embedding_dim, attention_dim, bias=False)

        def forward(self, embedded: torch.Tensor) -> torch.Tensor:
            k = self.key_gen(embedded)
            q = self.query_gen(embedded)
            v = self.value_gen(embedded)

            scores = q @ torch.transpose(k, 1, 2) # @ is the same as torch.matmul()
            context_length, attention_dim = k.shape[1], k.shape[2]
            scores = scores / (attention_dim ** 0.5)

            lower_triangular = torch.tril(torch.ones(context_length, context_length))
            mask = lower_triangular == 0
            scores = scores.masked_fill(mask, float('-inf'))
            scores = nn.functional.softmax(scores, dim = 2)

            return scores @ v
