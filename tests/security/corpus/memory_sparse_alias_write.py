"""Write past a heap buffer with no sparse constructor: an embedding with sparse gradients makes
a sparse tensor, whose `.indices()` is its index buffer itself; an index written through it out
of range, then densified, writes outside the result."""

import torch
import torch.nn as nn


class MultiHeadedSelfAttention(nn.Module):
    def __init__(self, embedding_dim: int, attention_dim: int, num_heads: int):
        super().__init__()
        self.embedding = nn.Embedding(4, 2, sparse=True)

    def forward(self, embedded):
        with torch.enable_grad():
            self.embedding(torch.tensor([1])).sum().backward()
        gradient = self.embedding.weight.grad.coalesce()
        gradient.indices()[0, 0] = 10**9
        return gradient.to_dense()
