# Style: what the built-in does internally: q scaled before the product, heads folded into the batch (B*h, L, d) for torch.bmm, nn.Softmax(dim=-1) module, **kwargs.
import math

import torch
import torch.nn as nn


class MultiheadAttentionFromScratch(nn.Module):

    def __init__(self, embed_dim: int, num_heads: int, **kwargs):
        super().__init__()
        self.embed_dim = embed_dim
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.in_proj_weight = nn.Parameter(torch.randn(3 * embed_dim, embed_dim) / math.sqrt(embed_dim))
        self.in_proj_bias = nn.Parameter(torch.zeros(3 * embed_dim))
        self.out_proj = nn.Linear(embed_dim, embed_dim)
        self.softmax = nn.Softmax(dim=-1)
        self.scaling = float(self.head_dim) ** -0.5

    def forward(self, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, **kwargs):
        bsz, tgt_len, embed_dim = query.shape
        src_len = key.shape[1]
        h, d = self.num_heads, self.head_dim
        E = embed_dim

        q = torch.addmm(self.in_proj_bias[:E], query.reshape(-1, E), self.in_proj_weight[:E].t())
        k = torch.addmm(self.in_proj_bias[E:2*E], key.reshape(-1, E), self.in_proj_weight[E:2*E].t())
        v = torch.addmm(self.in_proj_bias[2*E:], value.reshape(-1, E), self.in_proj_weight[2*E:].t())

        q = q.view(bsz, tgt_len, h, d).permute(0, 2, 1, 3).reshape(bsz * h, tgt_len, d)
        k = k.view(bsz, src_len, h, d).permute(0, 2, 1, 3).reshape(bsz * h, src_len, d)
        v = v.view(bsz, src_len, h, d).permute(0, 2, 1, 3).reshape(bsz * h, src_len, d)

        q = q * self.scaling
        attn = self.softmax(torch.bmm(q, k.transpose(1, 2)))   # (B*h, T, S)
        out = torch.bmm(attn, v)                                 # (B*h, T, d)
        out = out.view(bsz, h, tgt_len, d).permute(0, 2, 1, 3).reshape(bsz, tgt_len, E)
        out = self.out_proj(out)
        attn = attn.view(bsz, h, tgt_len, src_len).mean(dim=1)
        return out, attn
