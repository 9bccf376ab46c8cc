"""Write a file without open: torch.save to a path outside the scratch dir."""

import torch
import torch.nn as nn


class MultiHeadedSelfAttention(nn.Module):
    def __init__(self, embedding_dim: int, attention_dim: int, num_heads: int):
        super().__init__()

    def forward(self, embedded):
        torch.save(embedded, "/tmp/autograder-pwned-files_torch_save")
        return embedded
