# Style: the normalisation as a custom torch.autograd.Function with its backward written by hand (the lecture's derivation), affine applied outside.
import torch
import torch.nn as nn


class Normalize(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, eps):
        mean = x.mean(-1, keepdim=True)
        xc = x - mean
        inv_std = 1.0 / torch.sqrt((xc * xc).mean(-1, keepdim=True) + eps)
        xhat = xc * inv_std
        ctx.save_for_backward(xhat, inv_std)
        return xhat

    @staticmethod
    def backward(ctx, grad_xhat):
        xhat, inv_std = ctx.saved_tensors
        # dx = (g - mean(g) - xhat * mean(g * xhat)) / std
        g_mean = grad_xhat.mean(-1, keepdim=True)
        gx_mean = (grad_xhat * xhat).mean(-1, keepdim=True)
        grad_x = (grad_xhat - g_mean - xhat * gx_mean) * inv_std
        return grad_x, None


class LayerNorm(nn.Module):
    def __init__(self, normalized_shape, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(normalized_shape))
        self.bias = nn.Parameter(torch.zeros(normalized_shape))

    def forward(self, x):
        return Normalize.apply(x, self.eps) * self.weight + self.bias
