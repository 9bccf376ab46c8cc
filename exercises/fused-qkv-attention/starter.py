import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def scaled_dot_product(q, k, v, mask=None):
    # q, k, v: (batch, num_heads, seq_len, head_dim); mask: added to the scores
    # return (values (batch, num_heads, seq_len, head_dim),
    #         attention (batch, num_heads, seq_len, seq_len))
    raise NotImplementedError


class MultiheadAttention(nn.Module):

    def __init__(self, input_dim, d_model, num_heads):
        super().__init__()
        self.input_dim = input_dim
        self.d_model = d_model
        self.num_heads = num_heads
        self.head_dim = d_model // num_heads
        self.qkv_layer = nn.Linear(input_dim, 3 * d_model)
        self.linear_layer = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        # x: (batch, seq_len, input_dim)
        # return: (batch, seq_len, d_model)
        raise NotImplementedError
