# Style: mirrors torch's own LayerNorm: normalized_shape turned into a tuple, reduction over its trailing dims, elementwise_affine/bias flags with their defaults, var with correction=0.
import torch
import torch.nn as nn


class LayerNorm(nn.Module):
    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = nn.Parameter(torch.ones(self.normalized_shape))
            self.bias = nn.Parameter(torch.zeros(self.normalized_shape)) if bias else None
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, input):
        dims = tuple(range(-len(self.normalized_shape), 0))
        mean = input.mean(dim=dims, keepdim=True)
        var = input.var(dim=dims, keepdim=True, correction=0)
        out = (input - mean) / torch.sqrt(var + self.eps)
        if self.weight is not None:
            out = out * self.weight
        if self.bias is not None:
            out = out + self.bias
        return out
