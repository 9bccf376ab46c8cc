import math

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    # Subtract the maximum along `axis` before np.exp, so that large scores don't overflow
    raise NotImplementedError


def multi_head_attention(
    x: np.ndarray, w_q: np.ndarray, w_k: np.ndarray, w_v: np.ndarray, w_o: np.ndarray
) -> np.ndarray:
    # x: (batch, seq_len, embed_dim)
    # w_q, w_k, w_v: (num_heads, embed_dim, head_dim); w_o: (num_heads * head_dim, embed_dim)
    # return: (batch, seq_len, embed_dim)
    raise NotImplementedError
