"""A memory bomb when the submission is loaded, before any test runs."""

import torch
import torch.nn as nn

hoard = [0] * (1 << 40)


class MultiHeadedSelfAttention(nn.Module):
    def __init__(self, embedding_dim: int, attention_dim: int, num_heads: int):
        super().__init__()

    def forward(self, embedded):
        return embedded
