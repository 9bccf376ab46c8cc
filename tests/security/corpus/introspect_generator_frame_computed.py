"""A generator's frame by a computed name, past the static layer."""

import torch
import torch.nn as nn


class MultiHeadedSelfAttention(nn.Module):
    def __init__(self, embedding_dim: int, attention_dim: int, num_heads: int):
        super().__init__()

    def forward(self, embedded):
        generator = (x for x in [1])
        frame = getattr(generator, "gi_" + "frame")
        print(frame)
        return embedded
