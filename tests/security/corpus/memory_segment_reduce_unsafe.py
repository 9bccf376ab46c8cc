"""Read and write outside a tensor: `torch.segment_reduce(..., unsafe=True)` skips the checks of
its lengths, which here reach far past the data."""

import torch
import torch.nn as nn


class MultiHeadedSelfAttention(nn.Module):
    def __init__(self, embedding_dim: int, attention_dim: int, num_heads: int):
        super().__init__()

    def forward(self, embedded):
        data = torch.zeros(4)
        lengths = torch.tensor([1 << 20])
        return torch.segment_reduce(data, "sum", lengths=lengths, unsafe=True)
