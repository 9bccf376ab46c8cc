# Style: a helper that turns the additive mask into a boolean "blocked" tensor under torch.no_grad(), then masked_fill with -inf on the scores.
import math

import torch
import torch.nn.functional as F


def blocked_positions(mask):
    """True where the additive mask forbids attending (its -inf entries)."""
    with torch.no_grad():
        return torch.isneginf(mask)


def scaled_dot_product(q, k, v, mask=None):
    scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(q.size(-1))
    if mask is not None:
        scores = scores.masked_fill(blocked_positions(mask), float("-inf"))
    attention = F.softmax(scores, dim=-1)
    return torch.matmul(attention, v), attention
