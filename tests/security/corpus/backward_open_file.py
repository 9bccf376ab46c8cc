"""A custom backward pass that writes a file with open(): backward runs the submission's own code
under the same builtins as forward, where open does not exist."""

import torch
import torch.nn as nn


class Leak(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, grad_output):
        open("/tmp/autograder-pwned-backward_open_file", "w").write("backward ran unguarded")
        return grad_output


class MultiHeadedSelfAttention(nn.Module):
    def __init__(self, embedding_dim: int, attention_dim: int, num_heads: int):
        super().__init__()

    def forward(self, embedded):
        with torch.enable_grad():
            x = embedded.detach().requires_grad_(True)
            Leak.apply(x).sum().backward()
        return embedded
