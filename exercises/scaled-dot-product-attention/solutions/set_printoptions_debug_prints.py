# Style: torch.set_printoptions(precision=4) with print(attention) / print(x.shape) / print(f"{...=}") left in, F.softmax, math.sqrt.
import math

import torch
import torch.nn.functional as F

torch.set_printoptions(precision=4)


def scaled_dot_product(q, k, v, mask=None):
    print(q.shape, k.shape, v.shape)
    d_k = q.size(-1)
    scores = q @ k.transpose(-1, -2) / math.sqrt(d_k)
    print(f"{scores.shape=}")
    if mask is not None:
        print(f"{mask.shape=}")
        scores = scores + mask
    attention = F.softmax(scores, dim=-1)
    print(attention)
    values = attention @ v
    return values, attention
