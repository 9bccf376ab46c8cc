# Style: the FFN as an nn.Sequential filled with add_module so its names are fc1/fc2, the attention as one class-free function, an additive float mask built from causal and keep.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def attention(qkv_layer, proj_layer, x, num_heads, keep=None):
    B, T, D = x.shape
    hd = D // num_heads
    q, k, v = qkv_layer(x).chunk(3, dim=-1)
    q, k, v = [t.reshape(B, T, num_heads, hd).permute(0, 2, 1, 3) for t in (q, k, v)]
    additive = torch.zeros(T, T, dtype=x.dtype)
    additive = additive.masked_fill(torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1), float("-inf"))
    additive = additive.expand(B, 1, T, T)
    if keep is not None:
        additive = additive.masked_fill(~keep.view(B, 1, 1, T), float("-inf"))
    w = F.softmax(q @ k.transpose(-1, -2) / math.sqrt(hd) + additive, dim=-1)
    out = (w @ v).permute(0, 2, 1, 3).reshape(B, T, D)
    return proj_layer(out)


class Attention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)

    def forward(self, x, keep=None):
        return attention(self.qkv, self.proj, x, self.num_heads, keep)


class TransformerBlock(nn.Module):
    def __init__(self, d_model, num_heads, ffn_dim):
        super().__init__()
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = Attention(d_model, num_heads)
        self.ln2 = nn.LayerNorm(d_model)
        self.ffn = nn.Sequential()
        self.ffn.add_module("fc1", nn.Linear(d_model, ffn_dim))
        self.ffn.add_module("act", nn.GELU())
        self.ffn.add_module("fc2", nn.Linear(ffn_dim, d_model))

    def forward(self, x, keep=None):
        residual = x
        x = self.attn(self.ln1(x), keep)
        x = x + residual
        residual = x
        x = self.ffn(self.ln2(x))
        return x + residual
