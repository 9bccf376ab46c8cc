import math

import torch
import torch.nn.functional as F


def scaled_dot_product(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / q.shape[-1]
    if mask is not None:
        scores = scores + mask
    attention = F.softmax(scores, dim=-1)
    return attention @ v, attention
