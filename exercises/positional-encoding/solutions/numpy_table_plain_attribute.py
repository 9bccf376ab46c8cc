# Style: the table built in NumPy (a tutorial's get_angles helper) and kept as a plain tensor attribute.
import numpy as np
import torch
import torch.nn as nn


def get_angles(pos, i, d_model):
    angle_rates = 1 / np.power(10000, (2 * (i // 2)) / np.float32(d_model))
    return pos * angle_rates


def sinusoidal_positions(seq_len, d_model):
    angle_rads = get_angles(np.arange(seq_len)[:, np.newaxis], np.arange(d_model)[np.newaxis, :], d_model)
    angle_rads[:, 0::2] = np.sin(angle_rads[:, 0::2])
    angle_rads[:, 1::2] = np.cos(angle_rads[:, 1::2])
    return torch.from_numpy(angle_rads).float()


class TokenAndPositionEmbedding(nn.Module):

    def __init__(self, vocab_size, d_model, max_len):
        super().__init__()
        self.d_model = d_model
        self.token_embedding = nn.Embedding(vocab_size, d_model)
        self.pos_encoding = sinusoidal_positions(max_len, d_model)

    def forward(self, ids):
        seq_len = ids.shape[1]
        x = self.token_embedding(ids)
        x *= np.sqrt(self.d_model)
        x += self.pos_encoding[:seq_len, :]
        return x
