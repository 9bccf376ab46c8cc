import torch
import torch.nn as nn


class LayerNorm(nn.Module):

    def __init__(self, normalized_shape, eps=1e-5):
        super().__init__()
        self.normalized_shape = normalized_shape
        self.eps = eps
        # TODO: register the learned scale `weight` (ones) and shift `bias` (zeros), each (normalized_shape,)

    def forward(self, x):
        # x: (..., normalized_shape)
        # return: the same shape, each vector of the last dimension normalised, then scaled and shifted
        pass
