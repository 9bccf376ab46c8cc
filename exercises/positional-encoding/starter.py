import math

import torch
import torch.nn as nn


def sinusoidal_positions(seq_len, d_model):
    # return: (seq_len, d_model) float32
    #   table[pos, 2i]     = sin(pos / 10000 ** (2i / d_model))
    #   table[pos, 2i + 1] = cos(pos / 10000 ** (2i / d_model))
    raise NotImplementedError


class TokenAndPositionEmbedding(nn.Module):

    def __init__(self, vocab_size, d_model, max_len):
        super().__init__()
        self.d_model = d_model
        self.token_embedding = nn.Embedding(vocab_size, d_model)
        # TODO: the (max_len, d_model) position table, as a buffer

    def forward(self, ids):
        # ids: (batch, seq_len) int64
        # return: (batch, seq_len, d_model) = sqrt(d_model) * embedding + positions
        raise NotImplementedError
