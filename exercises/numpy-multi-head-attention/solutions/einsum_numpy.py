# Style: np.einsum for every product, D ** 0.5 for the scale, softmax with a keepdims max written inline.
import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    m = np.max(x, axis=axis, keepdims=True)
    e = np.exp(x - m)
    return e / np.sum(e, axis=axis, keepdims=True)


def multi_head_attention(x: np.ndarray, w_q: np.ndarray, w_k: np.ndarray, w_v: np.ndarray, w_o: np.ndarray) -> np.ndarray:
    D = w_q.shape[-1]
    q = np.einsum("btc,hcd->bhtd", x, w_q)
    k = np.einsum("btc,hcd->bhtd", x, w_k)
    v = np.einsum("btc,hcd->bhtd", x, w_v)
    scores = np.einsum("bhtd,bhsd->bhts", q, k) / D ** 0.5
    a = softmax(scores, axis=-1)
    heads = np.einsum("bhts,bhsd->bthd", a, v)           # (B, T, H, D)
    B, T, H, _ = heads.shape
    return np.einsum("btk,kc->btc", heads.reshape(B, T, H * D), w_o)
