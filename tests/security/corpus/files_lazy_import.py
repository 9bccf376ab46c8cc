"""Have torch read files on our behalf: reading a tensor's `.grad` makes torch import a module
from disk the first time. Only the process layer (Landlock) can refuse that read."""

import torch
import torch.nn as nn


class MultiHeadedSelfAttention(nn.Module):
    def __init__(self, embedding_dim: int, attention_dim: int, num_heads: int):
        super().__init__()

    def forward(self, embedded):
        with torch.enable_grad():
            weight = torch.ones(3, requires_grad=True)
            (weight * 2).sum().backward()
        print(weight.grad)
        return embedded
