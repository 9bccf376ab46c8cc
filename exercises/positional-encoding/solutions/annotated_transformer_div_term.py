# Style: the Annotated Transformer's PositionalEncoding (exp/log div_term, a (1, max_len, d) buffer), adapted to token ids.
import math

import torch
import torch.nn as nn


def sinusoidal_positions(seq_len, d_model):
    pe = torch.zeros(seq_len, d_model)
    position = torch.arange(0, seq_len).unsqueeze(1)
    div_term = torch.exp(torch.arange(0, d_model, 2) * -(math.log(10000.0) / d_model))
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term)
    return pe


class TokenAndPositionEmbedding(nn.Module):

    def __init__(self, vocab_size, d_model, max_len):
        super().__init__()
        self.d_model = d_model
        self.token_embedding = nn.Embedding(vocab_size, d_model)
        pe = sinusoidal_positions(max_len, d_model).unsqueeze(0)
        self.register_buffer("pe", pe)

    def forward(self, ids):
        x = self.token_embedding(ids) * math.sqrt(self.d_model)
        x = x + self.pe[:, : x.size(1)].requires_grad_(False)
        return x
