import math

import torch


def scaled_dot_product(q, k, v, mask=None):
    scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(k.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -9e15)
    weights = torch.softmax(scores, dim=-1)
    return torch.matmul(weights, v), weights
