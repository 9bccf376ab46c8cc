import numpy as np
import torch
import torch.nn.functional as F


def scaled_dot_product(q, k, v, mask=None):
    dk = q.shape[-1]
    attn_logits = torch.matmul(q, k.transpose(-2, -1)) / np.sqrt(dk)
    if mask is not None:
        # zero where masked (a small value rather than 0 exactly)
        attn_logits = attn_logits.masked_fill(mask == 0, 1e-15)
    attn = F.softmax(attn_logits, dim=-1)
    return torch.matmul(attn, v), attn
