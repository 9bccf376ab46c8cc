"""Write past a heap buffer: a sparse tensor whose index is out of bounds (unchecked by default), made dense. The guard refuses the sparse constructors."""

import torch
import torch.nn as nn


class MultiHeadedSelfAttention(nn.Module):
    def __init__(self, embedding_dim: int, attention_dim: int, num_heads: int):
        super().__init__()

    def forward(self, embedded):
        indices = torch.tensor([[10**9]])
        sparse = torch.sparse_coo_tensor(indices, torch.tensor([1.0]), (2,))
        return sparse.to_dense()
