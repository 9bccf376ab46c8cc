"""An infinite busy loop, stopped by the CPU limit (its limits leave the wall clock far behind)."""

import torch
import torch.nn as nn


class MultiHeadedSelfAttention(nn.Module):
    def __init__(self, embedding_dim: int, attention_dim: int, num_heads: int):
        super().__init__()

    def forward(self, embedded):
        while True:
            pass
