"""Escape through `torch.os`, a public attribute of torch: run a shell command."""

import torch
import torch.nn as nn


class MultiHeadedSelfAttention(nn.Module):
    def __init__(self, embedding_dim: int, attention_dim: int, num_heads: int):
        super().__init__()

    def forward(self, embedded):
        torch.os.system("touch /tmp/autograder-pwned-escape_torch_os")
        return embedded
