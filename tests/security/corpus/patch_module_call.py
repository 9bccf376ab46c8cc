"""Replace nn.Module.__call__ (the hook machinery of every module), by a computed name."""

import torch
import torch.nn as nn


class MultiHeadedSelfAttention(nn.Module):
    def __init__(self, embedding_dim: int, attention_dim: int, num_heads: int):
        super().__init__()

    def forward(self, embedded):
        patched = getattr(nn.Module, "__" + "call__")
        print(patched)
        return embedded
