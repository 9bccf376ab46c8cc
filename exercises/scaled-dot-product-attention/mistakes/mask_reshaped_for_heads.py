import math

import torch
import torch.nn.functional as F


def scaled_dot_product(q, k, v, mask=None):
    d_k = q.size()[-1]
    scaled = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(d_k)
    if mask is not None:
        # (T, T) -> (1, 1, T, T): the same mask for every batch and every head
        scaled = scaled + mask.unsqueeze(0).unsqueeze(0)
    attention = F.softmax(scaled, dim=-1)
    values = torch.matmul(attention, v)
    return values, attention
