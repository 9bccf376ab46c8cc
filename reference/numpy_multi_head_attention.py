"""Multi-head self-attention from scratch in NumPy (Vaswani et al., 2017), in float64.

    head_h = softmax(Q_h K_h^T / sqrt(D)) V_h,   Q_h = X W^Q_h,  K_h = X W^K_h,  V_h = X W^V_h
    MultiHead(X) = Concat(head_1, ..., head_H) W^O

The projection matrices are applied on the right (y = x @ w), with one matrix per head stacked
along the first axis, so the number of heads is w_q.shape[0].

Shapes: B is the batch size, T the sequence length, C the embedding dimension, H the number of
heads, D the size of each head.
"""

from __future__ import annotations

import math

import numpy as np

from grader.variants import WrongVariant


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """Numerically stable softmax: shifting by the maximum leaves the result unchanged."""
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    probabilities: np.ndarray = e / e.sum(axis=axis, keepdims=True)
    return probabilities


def multi_head_attention(
    x: np.ndarray,
    w_q: np.ndarray,
    w_k: np.ndarray,
    w_v: np.ndarray,
    w_o: np.ndarray,
    *,
    softmax_axis: int = -1,
) -> np.ndarray:
    """x (B, T, C); w_q, w_k, w_v (H, C, D); w_o (H * D, C). Returns (B, T, C).
    (`softmax_axis` is there for the known mistake of another axis.)"""
    B, T, _ = x.shape
    H, _, D = w_q.shape
    x = x[:, np.newaxis]  # (B, 1, T, C): broadcasts over the heads
    q, k, v = x @ w_q, x @ w_k, x @ w_v  # each (B, H, T, D)
    scores = q @ k.swapaxes(-1, -2) / math.sqrt(D)  # (B, H, T, T)
    heads = softmax(scores, axis=softmax_axis) @ v  # (B, H, T, D)
    concatenated = heads.transpose(0, 2, 1, 3).reshape(B, T, H * D)  # (B, T, H, D) -> (B, T, H*D)
    output: np.ndarray = concatenated @ w_o  # (B, T, C)
    return output


# --- Known mistakes -------------------------------------------------------------------------


def _missing_scaling(
    x: np.ndarray, w_q: np.ndarray, w_k: np.ndarray, w_v: np.ndarray, w_o: np.ndarray
) -> np.ndarray:
    # Scaling W^Q by sqrt(D) scales every score by sqrt(D), cancelling the 1/sqrt(D).
    return multi_head_attention(x, w_q * math.sqrt(w_q.shape[-1]), w_k, w_v, w_o)


def _softmax_over_queries(
    x: np.ndarray, w_q: np.ndarray, w_k: np.ndarray, w_v: np.ndarray, w_o: np.ndarray
) -> np.ndarray:
    return multi_head_attention(x, w_q, w_k, w_v, w_o, softmax_axis=-2)


VARIANTS = (
    WrongVariant(
        code="missing-scaling",
        message="Your output matches attention without the 1/sqrt(D) scaling: divide the "
        "scores Q_h K_h^T by the square root of the head size D before the softmax.",
        entry=_missing_scaling,
    ),
    WrongVariant(
        code="softmax-over-queries",
        message="Your output matches a softmax over the queries' axis: each query's weights "
        "must sum to 1 over the keys, the last axis of the scores (axis=-1).",
        entry=_softmax_over_queries,
    ),
)
