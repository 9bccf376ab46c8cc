# Style: softmax in log space with the logsumexp .detach()ed ("it is only a normaliser"): the same weights, other gradients.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class MultiheadAttentionFromScratch(nn.Module):

    def __init__(self, embed_dim: int, num_heads: int):
        super().__init__()
        self.embed_dim = embed_dim
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.in_proj_weight = nn.Parameter(torch.randn(3 * embed_dim, embed_dim) / math.sqrt(embed_dim))
        self.in_proj_bias = nn.Parameter(torch.zeros(3 * embed_dim))
        self.out_proj = nn.Linear(embed_dim, embed_dim)

    def forward(self, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor):
        B, T, E = query.shape
        S = key.shape[1]
        h, d = self.num_heads, self.head_dim
        w_q, w_k, w_v = self.in_proj_weight.chunk(3)
        b_q, b_k, b_v = self.in_proj_bias.chunk(3)
        q = F.linear(query, w_q, b_q).view(B, T, h, d).transpose(1, 2)
        k = F.linear(key, w_k, b_k).view(B, S, h, d).transpose(1, 2)
        v = F.linear(value, w_v, b_v).view(B, S, h, d).transpose(1, 2)
        scores = q @ k.transpose(-2, -1) / math.sqrt(d)
        log_weights = scores - torch.logsumexp(scores, dim=-1, keepdim=True).detach()
        weights = log_weights.exp()
        out = (weights @ v).transpose(1, 2).reshape(B, T, E)
        return self.out_proj(out), weights.mean(dim=1)
