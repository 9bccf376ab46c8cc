"""A use after free: `ndarray.resize(refcheck=False)` reallocates the array's memory while a view
still points into the old block, which the view then reads and writes."""

import numpy as np


def multi_head_attention(x, w_q, w_k, w_v, w_o):
    base = np.zeros(1 << 16)
    view = base[:]
    base.resize(1 << 20, refcheck=False)
    view[:] = 1.0
    return x
