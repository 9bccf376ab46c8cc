# Style: a notebook's double loop over positions and pairs with math.sin/math.cos, a torch.tensor built from lists, shape prints.
import math

import torch
import torch.nn as nn


def sinusoidal_positions(seq_len, d_model):
    rows = []
    for pos in range(seq_len):
        row = []
        for i in range(0, d_model, 2):
            angle = pos / (10000 ** (i / d_model))
            row.append(math.sin(angle))
            row.append(math.cos(angle))
        rows.append(row)
    table = torch.tensor(rows, dtype=torch.float32)
    print("table", table.shape)
    return table


class TokenAndPositionEmbedding(nn.Module):

    def __init__(self, vocab_size, d_model, max_len):
        super().__init__()
        self.d_model = d_model
        self.token_embedding = nn.Embedding(vocab_size, d_model)
        with torch.no_grad():
            table = sinusoidal_positions(max_len, d_model)
        self.register_buffer("table", table.detach())

    def forward(self, ids):
        print("ids", ids.shape)
        batch_size, seq_len = ids.shape
        emb = self.token_embedding(ids)
        emb = emb * math.sqrt(self.d_model)
        out = emb + self.table[:seq_len].unsqueeze(0).expand(batch_size, -1, -1)
        print("out", out.shape)
        return out
