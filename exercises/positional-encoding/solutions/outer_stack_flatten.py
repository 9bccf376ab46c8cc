# Style: inverse frequencies and torch.outer; the interleave done by stacking (sin, cos) on a new last axis and flattening it.
import math

import torch
import torch.nn as nn


def sinusoidal_positions(seq_len, d_model):
    inv_freq = 1.0 / (10000 ** (torch.arange(0, d_model, 2, dtype=torch.float64) / d_model))
    angles = torch.outer(torch.arange(seq_len, dtype=torch.float64), inv_freq)  # (T, d/2)
    return torch.stack([angles.sin(), angles.cos()], dim=-1).flatten(-2).float()  # (T, d)


class TokenAndPositionEmbedding(nn.Module):

    def __init__(self, vocab_size, d_model, max_len):
        super().__init__()
        self.token_embedding = nn.Embedding(vocab_size, d_model)
        self.register_buffer("pos", sinusoidal_positions(max_len, d_model), persistent=False)
        self.register_buffer("scale", torch.tensor(math.sqrt(d_model)), persistent=False)

    def forward(self, ids):
        T = ids.size(-1)
        return torch.addcmul(self.pos[:T], self.token_embedding(ids), self.scale)
