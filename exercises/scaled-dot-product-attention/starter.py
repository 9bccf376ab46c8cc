import math

import torch
import torch.nn.functional as F


def scaled_dot_product(q, k, v, mask=None):
    # q: (..., T, d_k); k: (..., S, d_k); v: (..., S, d_v)
    # mask: None, or a tensor added to the scores, broadcastable to (..., T, S)
    # return (values (..., T, d_v), attention (..., T, S))
    raise NotImplementedError
