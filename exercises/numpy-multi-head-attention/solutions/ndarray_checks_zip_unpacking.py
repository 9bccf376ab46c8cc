# Style: type checks with isinstance(x, np.ndarray) and a `from numpy import ndarray`, the
# output preallocated with the np.ndarray constructor, heads gathered by zipping the weight
# stacks, and each head's result unpacked from a tuple.
import math
from typing import List, Tuple

import numpy as np
from numpy import ndarray


def _softmax(scores: ndarray) -> ndarray:
    shifted = scores - scores.max(axis=-1, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=-1, keepdims=True)


def _head(x: ndarray, wq: ndarray, wk: ndarray, wv: ndarray) -> Tuple[ndarray, ndarray]:
    q, k, v = (x @ w for w in (wq, wk, wv))
    weights = _softmax(q @ k.transpose(0, 2, 1) / math.sqrt(k.shape[-1]))
    return weights @ v, weights


def multi_head_attention(x, w_q, w_k, w_v, w_o):
    assert isinstance(x, np.ndarray) and isinstance(w_o, ndarray)
    batch, tokens, _ = x.shape
    num_heads, _, head_dim = w_q.shape
    concat = np.ndarray((batch, tokens, num_heads * head_dim), dtype=x.dtype)
    outputs: List[ndarray] = []
    for h, (wq, wk, wv) in enumerate(zip(w_q, w_k, w_v)):
        out, _weights = _head(x, wq, wk, wv)
        concat[..., h * head_dim : (h + 1) * head_dim] = out
        outputs.append(out)
    assert all(isinstance(out, np.ndarray) for out in outputs)
    return concat @ w_o
