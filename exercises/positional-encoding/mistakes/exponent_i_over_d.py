# Style: loops over the pairs with the pair index i in the exponent, i / d_model instead of 2i / d_model.
import math

import torch
import torch.nn as nn


def sinusoidal_positions(seq_len, d_model):
    pe = torch.zeros(seq_len, d_model)
    for pos in range(seq_len):
        for i in range(d_model // 2):
            denom = 10000 ** (i / d_model)
            pe[pos, 2 * i] = math.sin(pos / denom)
            pe[pos, 2 * i + 1] = math.cos(pos / denom)
    return pe


class TokenAndPositionEmbedding(nn.Module):

    def __init__(self, vocab_size, d_model, max_len):
        super().__init__()
        self.d_model = d_model
        self.token_embedding = nn.Embedding(vocab_size, d_model)
        self.register_buffer("pe", sinusoidal_positions(max_len, d_model))

    def forward(self, ids):
        x = self.token_embedding(ids) * math.sqrt(self.d_model)
        return x + self.pe[: ids.size(1)]
