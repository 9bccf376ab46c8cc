# Style: output preallocated with np.zeros and filled per head by slice assignment, with print(x.shape)/print(f"{...=}") debug prints left in.
import math

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    x_max = np.max(x, axis=axis, keepdims=True)
    ex = np.exp(x - x_max)
    return ex / ex.sum(axis=axis, keepdims=True)


def multi_head_attention(
    x: np.ndarray, w_q: np.ndarray, w_k: np.ndarray, w_v: np.ndarray, w_o: np.ndarray
) -> np.ndarray:
    print(x.shape, w_q.shape, w_o.shape)
    B, T, C = x.shape
    H, _, D = w_q.shape
    concat = np.zeros((B, T, H * D))
    for h in range(H):
        q, k, v = x @ w_q[h], x @ w_k[h], x @ w_v[h]
        s = np.matmul(q, np.transpose(k, (0, 2, 1))) / math.sqrt(D)
        concat[:, :, h * D:(h + 1) * D] = softmax(s) @ v
    print(f"{concat.shape=}")
    out = concat @ w_o
    print(out)
    return out
