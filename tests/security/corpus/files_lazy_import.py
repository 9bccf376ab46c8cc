"""Have torch read files on our behalf: printing a tensor made torch import a module from disk
the first time. The warm process now prints one before any child runs, so the child imports
nothing; were it to, the process layer (Landlock) would refuse the read."""

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
