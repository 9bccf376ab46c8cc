# Style: every head at once with torch.einsum on the heads' stacked weights, a boolean triu mask, and the projection (named W_o) applied as an einsum with its weight.
import math

import torch
import torch.nn as nn


class MultiHeadedSelfAttention(nn.Module):

    def __init__(self, embedding_dim: int, attention_dim: int, num_heads: int):
        super().__init__()
        torch.manual_seed(0)
        # the heads are only here for their weights: same order as the starter, so same numbers
        self.heads = nn.ModuleList([self.SingleHeadAttention(embedding_dim, attention_dim // num_heads) for _ in range(num_heads)])
        self.W_o = nn.Linear(attention_dim, attention_dim, bias=False)

    def forward(self, embedded: torch.Tensor) -> torch.Tensor:
        Wq = torch.stack([h.query_gen.weight for h in self.heads])  # (H, hs, C)
        Wk = torch.stack([h.key_gen.weight for h in self.heads])
        Wv = torch.stack([h.value_gen.weight for h in self.heads])
        q = torch.einsum('btc,hdc->bhtd', embedded, Wq)
        k = torch.einsum('btc,hdc->bhtd', embedded, Wk)
        v = torch.einsum('btc,hdc->bhtd', embedded, Wv)

        B, H, T, hs = q.shape
        scores = torch.einsum('bhtd,bhsd->bhts', q, k) / math.sqrt(hs)
        future = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
        scores = scores.masked_fill(future, float('-inf'))
        att = torch.softmax(scores, dim=-1)

        out = torch.einsum('bhts,bhsd->bthd', att, v).reshape(B, T, H * hs)
        out = torch.einsum('btd,od->bto', out, self.W_o.weight)  # same as self.W_o(out)
        return torch.round(out, decimals=4)

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
