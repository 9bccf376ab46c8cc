# Style: embedding lookup as a one-hot matrix product with the embedding's weight, and the table recomputed in forward under no_grad.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def sinusoidal_positions(seq_len, d_model):
    pos = torch.arange(seq_len).float().unsqueeze(1)  # (T, 1)
    two_i = torch.arange(0, d_model, 2).float()  # (d/2,)
    angle = pos / torch.pow(10000.0, two_i / d_model)  # (T, d/2)
    pe = torch.empty(seq_len, d_model)
    pe[:, ::2] = angle.sin()
    pe[:, 1::2] = angle.cos()
    return pe


class TokenAndPositionEmbedding(nn.Module):

    def __init__(self, vocab_size, d_model, max_len):
        super().__init__()
        self.vocab_size = vocab_size
        self.d_model = d_model
        self.max_len = max_len
        self.token_embedding = nn.Embedding(vocab_size, d_model)

    def forward(self, ids):
        one_hot = F.one_hot(ids, self.vocab_size).to(self.token_embedding.weight.dtype)
        tok = one_hot @ self.token_embedding.weight  # (B, T, d)
        with torch.no_grad():  # the positions are constants
            pe = sinusoidal_positions(ids.shape[1], self.d_model)
        return tok * self.d_model**0.5 + pe
