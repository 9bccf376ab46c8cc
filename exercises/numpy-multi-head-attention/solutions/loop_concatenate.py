import math

import numpy as np


def softmax(x, axis=-1):
    shifted = np.exp(x - x.max(axis=axis, keepdims=True))
    return shifted / shifted.sum(axis=axis, keepdims=True)


def multi_head_attention(x, w_q, w_k, w_v, w_o):
    heads = []
    for h in range(w_q.shape[0]):
        q, k, v = x @ w_q[h], x @ w_k[h], x @ w_v[h]
        weights = softmax(q @ k.transpose(0, 2, 1) / math.sqrt(q.shape[-1]))
        heads.append(weights @ v)
    return np.concatenate(heads, axis=-1) @ w_o
