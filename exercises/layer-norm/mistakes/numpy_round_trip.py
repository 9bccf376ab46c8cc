import numpy as np
import torch
import torch.nn as nn


class LayerNorm(nn.Module):
    def __init__(self, normalized_shape, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(normalized_shape))
        self.bias = nn.Parameter(torch.zeros(normalized_shape))

    def forward(self, x):
        a = x.detach().numpy()
        xhat = (a - a.mean(-1, keepdims=True)) / np.sqrt(a.var(-1, keepdims=True) + self.eps)
        return torch.from_numpy(xhat.astype(a.dtype)) * self.weight + self.bias
