"""Reach a forbidden module through aliases: torch.nn.functional keeps its own `torch` and `importlib`."""

import torch
import torch.nn as nn
import torch.nn.functional as F

functional = nn.functional
tools = [functional, F]


class MultiHeadedSelfAttention(nn.Module):
    def __init__(self, embedding_dim: int, attention_dim: int, num_heads: int):
        super().__init__()

    def forward(self, embedded):
        importer = tools[0].importlib
        importer.import_module("os").system("touch /tmp/autograder-pwned-escape_aliasing")
        return embedded
