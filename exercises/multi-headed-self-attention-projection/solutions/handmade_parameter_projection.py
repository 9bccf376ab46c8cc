# Style: W_O as a hand-made nn.Parameter drawn like nn.Linear's weight (uniform in +-1/sqrt(fan_in)), applied as concatenated @ self.W_O.T.
import math

import torch
import torch.nn as nn


class MultiHeadedSelfAttention(nn.Module):

    def __init__(self, embedding_dim: int, attention_dim: int, num_heads: int):
        super().__init__()
        torch.manual_seed(0)
        head_size = attention_dim // num_heads
        self.att_heads = nn.ModuleList([self.SingleHeadAttention(embedding_dim, head_size) for _ in range(num_heads)])
        bound = 1 / math.sqrt(attention_dim)
        self.W_O = nn.Parameter(torch.empty(attention_dim, attention_dim).uniform_(-bound, bound))

    def forward(self, embedded: torch.Tensor) -> torch.Tensor:
        concatenated = torch.cat([head(embedded) for head in self.att_heads], dim=2)
        return torch.round(concatenated @ self.W_O.T, decimals=4)

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
