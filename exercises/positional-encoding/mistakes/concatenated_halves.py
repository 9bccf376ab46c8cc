# Style: sines in the first half of the features, cosines in the second (the tensor2tensor layout).
import math

import torch
import torch.nn as nn


def sinusoidal_positions(seq_len, d_model):
    position = torch.arange(seq_len, dtype=torch.float32)[:, None]
    freqs = torch.exp(-math.log(10000.0) * torch.arange(0, d_model, 2, dtype=torch.float32) / d_model)
    args = position * freqs[None, :]
    return torch.cat([torch.sin(args), torch.cos(args)], dim=-1)


class TokenAndPositionEmbedding(nn.Module):

    def __init__(self, vocab_size, d_model, max_len):
        super().__init__()
        self.d_model = d_model
        self.token_embedding = nn.Embedding(vocab_size, d_model)
        self.register_buffer("pe", sinusoidal_positions(max_len, d_model))

    def forward(self, ids):
        return self.token_embedding(ids) * math.sqrt(self.d_model) + self.pe[: ids.shape[1]]
