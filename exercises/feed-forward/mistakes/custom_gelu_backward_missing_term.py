import math

import torch
import torch.nn as nn


class GELU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        cdf = 0.5 * (1 + torch.erf(x / math.sqrt(2)))
        ctx.save_for_backward(cdf)
        return x * cdf

    @staticmethod
    def backward(ctx, grad_output):
        (cdf,) = ctx.saved_tensors
        return grad_output * cdf  # d/dx x*Phi(x) ~ Phi(x)


class FeedForward(nn.Module):
    def __init__(self, d_model, expansion=4, dropout=0.1):
        super().__init__()
        self.fc1 = nn.Linear(d_model, expansion * d_model)
        self.fc2 = nn.Linear(expansion * d_model, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        return self.dropout(self.fc2(GELU.apply(self.fc1(x))))
