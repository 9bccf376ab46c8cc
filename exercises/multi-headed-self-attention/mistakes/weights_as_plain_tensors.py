# Style: no nn.Linear at all: each head's key/query/value matrices drawn as plain tensors with torch.empty(...).uniform_(), as nn.Linear would, and applied with x @ W.T.
import math

import torch
import torch.nn as nn


class MultiHeadedSelfAttention(nn.Module):

    def __init__(self, embedding_dim: int, attention_dim: int, num_heads: int):
        super().__init__()
        torch.manual_seed(0)
        head_size = attention_dim // num_heads
        self.num_heads = num_heads
        bound = 1 / math.sqrt(embedding_dim)
        self.W_k, self.W_q, self.W_v = [], [], []
        for _ in range(num_heads):
            torch.manual_seed(0)  # every head starts from the seed, as the given head does
            self.W_k.append(torch.empty(head_size, embedding_dim).uniform_(-bound, bound))
            self.W_q.append(torch.empty(head_size, embedding_dim).uniform_(-bound, bound))
            self.W_v.append(torch.empty(head_size, embedding_dim).uniform_(-bound, bound))

    def forward(self, embedded: torch.Tensor) -> torch.Tensor:
        T = embedded.shape[1]
        mask = torch.tril(torch.ones(T, T)) == 0
        outputs = []
        for h in range(self.num_heads):
            k = embedded @ self.W_k[h].T
            q = embedded @ self.W_q[h].T
            v = embedded @ self.W_v[h].T
            scores = q @ k.transpose(1, 2) / math.sqrt(k.shape[2])
            scores = scores.masked_fill(mask, float('-inf'))
            outputs.append(torch.softmax(scores, dim=2) @ v)
        return torch.round(torch.cat(outputs, dim=2), decimals=4)
