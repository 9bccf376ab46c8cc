# Style: a module-level layer_norm() helper of their own (same name as the functional one), torch.empty + reset_parameters() with nn.init, extra_repr, a std with correction=0.
import torch
import torch.nn as nn


def layer_norm(x, weight, bias, eps):
    mu = x.mean(dim=-1, keepdim=True)
    sigma = torch.sqrt(x.std(dim=-1, keepdim=True, correction=0) ** 2 + eps)
    return weight * (x - mu) / sigma + bias


class LayerNorm(nn.Module):
    def __init__(self, normalized_shape, eps=1e-5):
        super().__init__()
        self.normalized_shape = (normalized_shape,)
        self.eps = eps
        self.weight = nn.Parameter(torch.empty(self.normalized_shape))
        self.bias = nn.Parameter(torch.empty(self.normalized_shape))
        self.reset_parameters()

    def reset_parameters(self):
        nn.init.ones_(self.weight)
        nn.init.zeros_(self.bias)

    def extra_repr(self):
        return f"{self.normalized_shape}, eps={self.eps}"

    def forward(self, x):
        return layer_norm(x, self.weight, self.bias, self.eps)
