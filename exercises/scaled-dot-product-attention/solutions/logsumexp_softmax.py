# Style: softmax in log space: attention = exp(scores - torch.logsumexp(scores, -1)), with d_k ** -0.5 as the scale.
import torch


def scaled_dot_product(q, k, v, mask=None):
    scores = (q @ k.transpose(-2, -1)) * q.shape[-1] ** -0.5
    if mask is not None:
        scores = scores + mask
    attention = (scores - scores.logsumexp(dim=-1, keepdim=True)).exp()
    return attention @ v, attention
