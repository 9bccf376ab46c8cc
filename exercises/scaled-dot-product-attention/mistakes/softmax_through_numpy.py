# Style: the softmax done in NumPy on scores.numpy() (np.exp, np.max, np.sum), turned back with torch.from_numpy; fine under no_grad, raises once gradients are on.
import math

import numpy as np
import torch


def scaled_dot_product(q, k, v, mask=None):
    d_k = q.shape[-1]
    scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(d_k)
    if mask is not None:
        scores = scores + mask
    s = scores.numpy()
    e = np.exp(s - np.max(s, axis=-1, keepdims=True))
    attention = torch.from_numpy(e / np.sum(e, axis=-1, keepdims=True))
    return torch.matmul(attention, v), attention
