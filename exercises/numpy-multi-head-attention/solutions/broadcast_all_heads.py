# Style: all heads at once by broadcasting x[:, None] @ w_q into (B, H, T, D), swapaxes, then transpose/reshape back.
import numpy as np


def softmax(x, axis=-1):
    shifted = x - x.max(axis=axis, keepdims=True)
    exps = np.exp(shifted)
    return exps / exps.sum(axis=axis, keepdims=True)


def multi_head_attention(x, w_q, w_k, w_v, w_o):
    B, T, C = x.shape
    H, _, D = w_q.shape
    xh = x[:, None, :, :]                  # (B, 1, T, C)
    q = xh @ w_q                            # (B, H, T, D)
    k = xh @ w_k
    v = xh @ w_v
    att = softmax(q @ np.swapaxes(k, -1, -2) / np.sqrt(D))   # (B, H, T, T)
    out = att @ v                           # (B, H, T, D)
    out = out.transpose(0, 2, 1, 3).reshape(B, T, H * D)
    return out @ w_o
