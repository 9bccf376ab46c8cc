# Style: softmax from its definition, torch.exp(scores) / torch.exp(scores).sum(-1, keepdim=True), with no max subtracted.
import math

import torch


def scaled_dot_product(q, k, v, mask=None):
    d_k = q.size(-1)
    scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(d_k)
    if mask is not None:
        scores = scores + mask
    exp_scores = torch.exp(scores)
    attention = exp_scores / exp_scores.sum(dim=-1, keepdim=True)
    return torch.matmul(attention, v), attention
