"""Escape through `torch.builtins`: the real `open`, to write outside the scratch dir."""

import torch
import torch.nn as nn


class MultiHeadedSelfAttention(nn.Module):
    def __init__(self, embedding_dim: int, attention_dim: int, num_heads: int):
        super().__init__()

    def forward(self, embedded):
        torch.builtins.open("/tmp/autograder-pwned-escape_torch_builtins", "w").write("pwned")
        return embedded
