"""A custom backward pass that runs a shell command through `torch.os`, in the hope that code run
by the autograd engine, after forward has returned, is no longer guarded."""

import torch
import torch.nn as nn


class Shell(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 2

    @staticmethod
    def backward(ctx, grad_output):
        torch.os.system("touch /tmp/autograder-pwned-backward_torch_os")
        return grad_output * 2


class MultiHeadedSelfAttention(nn.Module):
    def __init__(self, embedding_dim: int, attention_dim: int, num_heads: int):
        super().__init__()

    def forward(self, embedded):
        with torch.enable_grad():
            x = embedded.detach().requires_grad_(True)
            (grad,) = torch.autograd.grad(Shell.apply(x).sum(), x)
        return grad
