# Style: softmax written by hand (shift by the row max, exp, normalise) inside `with torch.no_grad():`, with `** 0.5` and a leftover `import numpy as np`.
import numpy as np
import torch


def scaled_dot_product(q, k, v, mask=None):
    with torch.no_grad():
        dk = q.shape[-1]
        s = q @ k.transpose(-2, -1) / dk ** 0.5
        if mask is not None:
            s = s + mask
        s = s - s.amax(dim=-1, keepdim=True)
        e = torch.exp(s)
        attention = e / e.sum(dim=-1, keepdim=True)
        out = attention @ v
    return out, attention
