# Style: the whole forward wrapped in torch.no_grad() "because it is only a lookup and an addition".
import math

import torch
import torch.nn as nn


def sinusoidal_positions(seq_len, d_model):
    pos = torch.arange(seq_len, dtype=torch.float32).unsqueeze(1)
    div = 10000 ** (torch.arange(0, d_model, 2, dtype=torch.float32) / d_model)
    pe = torch.zeros(seq_len, d_model)
    pe[:, 0::2] = torch.sin(pos / div)
    pe[:, 1::2] = torch.cos(pos / div)
    return pe


class TokenAndPositionEmbedding(nn.Module):

    def __init__(self, vocab_size, d_model, max_len):
        super().__init__()
        self.d_model = d_model
        self.token_embedding = nn.Embedding(vocab_size, d_model)
        self.register_buffer("pe", sinusoidal_positions(max_len, d_model))

    def forward(self, ids):
        with torch.no_grad():
            x = self.token_embedding(ids) * math.sqrt(self.d_model)
            return x + self.pe[: ids.shape[1]]
