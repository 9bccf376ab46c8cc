"""An infinite busy loop, stopped by the supervisor's wall clock (its limits leave the CPU limit far behind)."""

import torch
import torch.nn as nn


class MultiHeadedSelfAttention(nn.Module):
    def __init__(self, embedding_dim: int, attention_dim: int, num_heads: int):
        super().__init__()

    def forward(self, embedded):
        n = 0
        while True:
            n += 1
