# Style: super(Cls, self).__init__() in both classes, typing.List annotations, torch.concat, and the projection applied with F.linear on its weight.
from typing import List

import torch
import torch.nn as nn
import torch.nn.functional as F


class MultiHeadedSelfAttention(nn.Module):

    def __init__(self, embedding_dim: int, attention_dim: int, num_heads: int):
        super(MultiHeadedSelfAttention, self).__init__()
        torch.manual_seed(0)
        self.num_heads = num_heads
        self.head_size = attention_dim // num_heads
        self.heads = nn.ModuleList()
        for _ in range(self.num_heads):
            self.heads.append(self.SingleHeadAttention(embedding_dim, self.head_size))
        self.out = nn.Linear(attention_dim, attention_dim, bias=False)

    def forward(self, embedded: torch.Tensor) -> torch.Tensor:
        results: List[torch.Tensor] = []
        for head in self.heads:
            results.append(head(embedded))
        concatenated = torch.concat(results, dim=-1)
        projected = F.linear(concatenated, self.out.weight)
        return torch.round(projected, decimals=4)

    class SingleHeadAttention(nn.Module):
        def __init__(self, embedding_dim: int, attention_dim: int):
            super(MultiHeadedSelfAttention.SingleHeadAttention, self).__init__()
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
