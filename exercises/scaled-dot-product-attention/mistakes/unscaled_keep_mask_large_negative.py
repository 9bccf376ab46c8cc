import torch


def scaled_dot_product(q, k, v, mask=None):
    scores = q @ k.transpose(-1, -2)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    attention = scores.softmax(dim=-1)
    return attention @ v, attention
