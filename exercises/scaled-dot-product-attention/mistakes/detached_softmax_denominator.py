# Style: a hand-written max-shifted softmax whose row sums are .detach()ed, treated as constants; right values, wrong gradients.
import math

import torch


def scaled_dot_product(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if mask is not None:
        scores = scores + mask
    e = torch.exp(scores - scores.amax(dim=-1, keepdim=True))
    total = e.sum(dim=-1, keepdim=True).detach()  # normaliser: a constant per row
    attention = e / total
    return attention @ v, attention
