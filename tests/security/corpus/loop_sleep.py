"""Block without burning CPU: sleep for ever."""

import time

import torch
import torch.nn as nn


class MultiHeadedSelfAttention(nn.Module):
    def __init__(self, embedding_dim: int, attention_dim: int, num_heads: int):
        super().__init__()

    def forward(self, embedded):
        time.sleep(10**6)
        return embedded
