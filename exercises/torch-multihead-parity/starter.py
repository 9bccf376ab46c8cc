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
        # The same parameters as nn.MultiheadAttention(embed_dim, num_heads), with the same names
        # (the grader loads its own values into them)
        self.in_proj_weight = nn.Parameter(torch.randn(3 * embed_dim, embed_dim) / math.sqrt(embed_dim))
        self.in_proj_bias = nn.Parameter(torch.zeros(3 * embed_dim))
        self.out_proj = nn.Linear(embed_dim, embed_dim)

    def forward(self, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor):
        # query: (batch, tgt_len, embed_dim); key, value: (batch, src_len, embed_dim)
        # return (attn_output (batch, tgt_len, embed_dim),
        #         attn_weights averaged over the heads (batch, tgt_len, src_len))
        raise NotImplementedError
