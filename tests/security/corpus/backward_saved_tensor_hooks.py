"""Saved-tensor hooks, reached by a computed name: installed for the whole process, they would
run the submission's code on every tensor that any backward pass saves, the grader's included."""

import torch
import torch.nn as nn

STOLEN = []


def pack(tensor):
    STOLEN.append(tensor)
    return tensor


class MultiHeadedSelfAttention(nn.Module):
    def __init__(self, embedding_dim: int, attention_dim: int, num_heads: int):
        super().__init__()

    def forward(self, embedded):
        hooks = getattr(getattr(torch, "auto" + "grad"), "gr" + "aph").saved_tensors_hooks
        with hooks(pack, lambda tensor: tensor):
            return embedded * 1
