"""A deeper path to subprocess, through a torch submodule that imports it (torch.utils.collect_env)."""

import torch
import torch.nn as nn


class MultiHeadedSelfAttention(nn.Module):
    def __init__(self, embedding_dim: int, attention_dim: int, num_heads: int):
        super().__init__()

    def forward(self, embedded):
        torch.utils.collect_env.subprocess.run(["touch", "/tmp/autograder-pwned-escape_deep_subprocess"])
        return embedded
