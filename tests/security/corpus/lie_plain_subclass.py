"""A tensor subclass that defines nothing the policy refuses, returned in place of a plain tensor."""

import torch
import torch.nn as nn


class Liar(torch.Tensor):
    pass


class MultiHeadedSelfAttention(nn.Module):
    def __init__(self, embedding_dim: int, attention_dim: int, num_heads: int):
        super().__init__()

    def forward(self, embedded):
        return embedded.as_subclass(Liar)
