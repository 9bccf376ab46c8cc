"""Read attributes through str.format fields, which the static layer cannot see."""

import torch
import torch.nn as nn


class MultiHeadedSelfAttention(nn.Module):
    def __init__(self, embedding_dim: int, attention_dim: int, num_heads: int):
        super().__init__()

    def forward(self, embedded):
        print("{0.os.environ}".format(torch))
        return embedded
