# Style: typing List/Optional/Tuple, __all__, a helper returning a Tuple, np.stack of the heads + reshape, and an `if __name__ == "__main__":` demo with the worked example.
from typing import List, Optional, Tuple

import numpy as np

__all__ = ["softmax", "multi_head_attention"]


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    z = x - x.max(axis=axis, keepdims=True)
    num = np.exp(z)
    return num / num.sum(axis=axis, keepdims=True)


def attention_head(x: np.ndarray, wq: np.ndarray, wk: np.ndarray, wv: np.ndarray, scale: Optional[float] = None) -> Tuple[np.ndarray, np.ndarray]:
    q, k, v = x @ wq, x @ wk, x @ wv
    if scale is None:
        scale = 1.0 / np.sqrt(q.shape[-1])
    weights = softmax(q @ k.swapaxes(1, 2) * scale)
    return weights @ v, weights


def multi_head_attention(x: np.ndarray, w_q: np.ndarray, w_k: np.ndarray, w_v: np.ndarray, w_o: np.ndarray) -> np.ndarray:
    outputs: List[np.ndarray] = []
    for wq, wk, wv in zip(w_q, w_k, w_v):
        out, _ = attention_head(x, wq, wk, wv)
        outputs.append(out)
    stacked = np.stack(outputs, axis=2)                  # (B, T, H, D)
    B, T, H, D = stacked.shape
    return stacked.reshape(B, T, H * D) @ w_o


if __name__ == "__main__":
    x = np.array([[[1., 0.], [0., 1.]]])
    w_q = np.array([[[1.], [0.]], [[0.], [1.]]])
    result = multi_head_attention(x, w_q, w_q.copy(), w_q.copy(), np.eye(2))
    print(np.round(result, 4))
    assert np.allclose(result, [[[0.7311, 0.5], [0.5, 0.7311]]], atol=1e-4)
