# Style: separate q/k/v projections taken as slices of the fused qkv weight with F.linear, a loop over heads, a softmax by hand with its max subtracted, GELU with torch.erf.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def gelu(x):
    return 0.5 * x * (1 + torch.erf(x / math.sqrt(2)))


def softmax(scores):
    scores = scores - scores.max(dim=-1, keepdim=True).values
    e = torch.exp(scores)
    return e / e.sum(dim=-1, keepdim=True)


class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.d_model = d_model
        self.num_heads = num_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)

    def forward(self, x, keep=None):
        D = self.d_model
        W, b = self.qkv.weight, self.qkv.bias
        q = F.linear(x, W[:D], b[:D])
        k = F.linear(x, W[D:2 * D], b[D:2 * D])
        v = F.linear(x, W[2 * D:], b[2 * D:])
        T = x.shape[1]
        allowed = torch.tril(torch.ones(T, T, dtype=torch.bool)).unsqueeze(0)  # (1, T, T)
        if keep is not None:
            allowed = allowed & keep.unsqueeze(1)  # (B, T, T)
        hd = D // self.num_heads
        heads = []
        for i in range(self.num_heads):
            qi, ki, vi = (t[..., i * hd:(i + 1) * hd] for t in (q, k, v))
            s = qi @ ki.transpose(1, 2) / math.sqrt(hd)
            s = torch.where(allowed, s, torch.tensor(float("-inf"), dtype=s.dtype))
            heads.append(softmax(s) @ vi)
        return self.proj(torch.cat(heads, dim=-1))


class FeedForward(nn.Module):
    def __init__(self, d_model, ffn_dim):
        super().__init__()
        self.fc1 = nn.Linear(d_model, ffn_dim)
        self.fc2 = nn.Linear(ffn_dim, d_model)

    def forward(self, x):
        return self.fc2(gelu(self.fc1(x)))


class TransformerBlock(nn.Module):
    def __init__(self, d_model, num_heads, ffn_dim):
        super().__init__()
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = CausalSelfAttention(d_model, num_heads)
        self.ln2 = nn.LayerNorm(d_model)
        self.ffn = FeedForward(d_model, ffn_dim)

    def forward(self, x, keep=None):
        h = x + self.attn(self.ln1(x), keep)
        return h + self.ffn(self.ln2(h))
