"""A recursion bomb."""

import torch
import torch.nn as nn


class MultiHeadedSelfAttention(nn.Module):
    def __init__(self, embedding_dim: int, attention_dim: int, num_heads: int):
        super().__init__()

    def forward(self, embedded):
        def deeper(n):
            return deeper(n + 1) + 1
        return deeper(0)
