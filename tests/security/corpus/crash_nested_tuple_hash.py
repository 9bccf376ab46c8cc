"""Crash CPython in one line: hash a deeply nested tuple (the C recursion has no depth check)."""

import torch
import torch.nn as nn


class MultiHeadedSelfAttention(nn.Module):
    def __init__(self, embedding_dim: int, attention_dim: int, num_heads: int):
        super().__init__()

    def forward(self, embedded):
        nested = ()
        for i in range(1000000):
            nested = (nested,)
        return {nested: 1}
