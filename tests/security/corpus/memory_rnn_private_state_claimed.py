"""Claim a library layer's private state by writing its name first: a private attribute the
submission has written is its own, so `self._flat_weights = []` before `nn.GRU.__init__` runs
would make the list that torch's C++ kernel reads the weights from the submission's to replace,
here with tensors far smaller than the shapes the kernel then reads them at."""

import torch
import torch.nn as nn


class MultiHeadedSelfAttention(nn.GRU):
    def __init__(self, embedding_dim: int, attention_dim: int, num_heads: int):
        self._flat_weights = []
        super().__init__(embedding_dim, embedding_dim, batch_first=True)
        self._flat_weights = [torch.zeros(1) for weight in self._flat_weights]

    def forward(self, embedded):
        output, _ = super().forward(embedded)
        return output
