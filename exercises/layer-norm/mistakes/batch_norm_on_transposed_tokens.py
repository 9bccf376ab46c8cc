# Reuses F.batch_norm on (tokens, features) transposed, so each token is a "channel".
import torch
import torch.nn as nn
import torch.nn.functional as F


class LayerNorm(nn.Module):
    def __init__(self, normalized_shape, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(normalized_shape))
        self.bias = nn.Parameter(torch.zeros(normalized_shape))

    def forward(self, x):
        rows = x.reshape(-1, x.shape[-1]).t()  # (D, tokens)
        xhat = F.batch_norm(rows, None, None, training=True, eps=self.eps).t()
        return xhat.reshape(x.shape) * self.weight + self.bias
