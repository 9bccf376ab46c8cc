# Style: projections by hand (x @ W.T + b), a loop over the heads slicing columns, weights averaged by summing and dividing by num_heads.
import math

import torch
import torch.nn as nn


class MultiheadAttentionFromScratch(nn.Module):

    def __init__(self, embed_dim: int, num_heads: int):
        super().__init__()
        self.embed_dim = embed_dim
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.in_proj_weight = nn.Parameter(torch.randn(3 * embed_dim, embed_dim) / math.sqrt(embed_dim))
        self.in_proj_bias = nn.Parameter(torch.zeros(3 * embed_dim))
        self.out_proj = nn.Linear(embed_dim, embed_dim)

    def forward(self, query, key, value):
        E = self.embed_dim
        Wq, Wk, Wv = self.in_proj_weight[:E], self.in_proj_weight[E:2 * E], self.in_proj_weight[2 * E:]
        bq, bk, bv = self.in_proj_bias[:E], self.in_proj_bias[E:2 * E], self.in_proj_bias[2 * E:]
        Q = query @ Wq.T + bq
        K = key @ Wk.T + bk
        V = value @ Wv.T + bv

        heads = []
        weights_sum = 0
        d = self.head_dim
        for i in range(self.num_heads):
            q_i = Q[:, :, i * d:(i + 1) * d]
            k_i = K[:, :, i * d:(i + 1) * d]
            v_i = V[:, :, i * d:(i + 1) * d]
            scores = q_i @ k_i.transpose(1, 2) / math.sqrt(d)
            w = torch.softmax(scores, dim=-1)
            heads.append(w @ v_i)
            weights_sum = weights_sum + w

        concat = torch.cat(heads, dim=-1)
        attn_output = self.out_proj(concat)
        attn_weights = weights_sum / self.num_heads
        return attn_output, attn_weights
