# Style: module-level private helpers (_scores, _causal_mask(T)), an nn.Softmax(dim=-1) module at module level, __all__ and a `__main__` demo with the worked example.
import math

import torch
import torch.nn as nn

__all__ = ["scaled_dot_product"]

_softmax = nn.Softmax(dim=-1)


def _scores(q, k):
    return torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(q.size(-1))


def _causal_mask(T):
    mask = torch.zeros(T, T)
    mask[torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)] = float("-inf")
    return mask


def scaled_dot_product(q, k, v, mask=None):
    scores = _scores(q, k)
    if mask is not None:
        scores = scores + mask
    attention = _softmax(scores)
    return attention @ v, attention


if __name__ == "__main__":
    q = torch.tensor([[[1., 0.], [0., 1.]]])
    k = torch.tensor([[[1., 0.], [0., 1.]]])
    v = torch.tensor([[[1., 2.], [3., 4.]]])
    values, attention = scaled_dot_product(q, k, v)
    print(attention)
    print(values)
    values, attention = scaled_dot_product(q, k, v, _causal_mask(2))
    print(attention)
    print(values)
