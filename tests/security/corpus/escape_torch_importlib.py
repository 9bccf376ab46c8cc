"""Escape through `torch.importlib`: import subprocess by name."""

import torch
import torch.nn as nn


class MultiHeadedSelfAttention(nn.Module):
    def __init__(self, embedding_dim: int, attention_dim: int, num_heads: int):
        super().__init__()

    def forward(self, embedded):
        torch.importlib.import_module("subprocess").run(["touch", "/tmp/autograder-pwned-escape_torch_importlib"])
        return embedded
