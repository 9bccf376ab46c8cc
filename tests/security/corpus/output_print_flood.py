"""Huge output: a flood of prints in every call."""

import torch
import torch.nn as nn


class MultiHeadedSelfAttention(nn.Module):
    def __init__(self, embedding_dim: int, attention_dim: int, num_heads: int):
        super().__init__()

    def forward(self, embedded):
        for i in range(100):
            print("x" * 10000)
        return embedded
