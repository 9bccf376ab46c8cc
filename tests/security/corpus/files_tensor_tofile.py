"""Write a file without open: ndarray.tofile on the tensor's numpy view."""

import torch
import torch.nn as nn


class MultiHeadedSelfAttention(nn.Module):
    def __init__(self, embedding_dim: int, attention_dim: int, num_heads: int):
        super().__init__()

    def forward(self, embedded):
        embedded.numpy().tofile("/tmp/autograder-pwned-files_tensor_tofile")
        return embedded
