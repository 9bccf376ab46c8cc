import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class ExactGELU(torch.autograd.Function):
    """GELU with its derivative written out: d/dx [x Phi(x)] = Phi(x) + x phi(x)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 0.5 * (1 + torch.erf(x / math.sqrt(2)))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        cdf = 0.5 * (1 + torch.erf(x / math.sqrt(2)))
        pdf = torch.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)
        return grad_output * (cdf + x * pdf)


class FeedForward(nn.Module):
    def __init__(self, d_model, expansion=4, dropout=0.1):
        super().__init__()
        self.fc1 = nn.Linear(d_model, expansion * d_model)
        self.fc2 = nn.Linear(expansion * d_model, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        return self.dropout(self.fc2(ExactGELU.apply(self.fc1(x))))
