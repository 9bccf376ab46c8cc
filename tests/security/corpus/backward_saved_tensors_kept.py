"""Keep every ctx (and what it saved) in a global list, and read the saved tensors back in a
later call, after the backward pass that owned them has freed them."""

import torch
import torch.nn as nn

KEPT = []


class Keep(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        KEPT.append(ctx)
        return x * x

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * 2 * x


class MultiHeadedSelfAttention(nn.Module):
    def __init__(self, embedding_dim: int, attention_dim: int, num_heads: int):
        super().__init__()

    def forward(self, embedded):
        with torch.enable_grad():
            x = embedded.detach().requires_grad_(True)
            Keep.apply(x).sum().backward()
        earlier = [ctx.saved_tensors for ctx in KEPT]
        return earlier[0][0]
