import math

import torch
import torch.nn.functional as F


def scaled_dot_product(q, k, v, mask=None):
    d_k = q.size(-1)
    scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, float('-inf'))
    attention = F.softmax(scores, dim=-1)
    values = torch.matmul(attention, v)
    return values, attention
