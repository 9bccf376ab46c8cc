# Style: einsum everywhere, one boolean mask (causal & keep) filled with torch.finfo(dtype).min instead of -inf, F.gelu.
import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h = num_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)

    def forward(self, x, keep=None):
        B, T, D = x.shape
        q, k, v = self.qkv(x).reshape(B, T, 3, self.h, D // self.h).unbind(dim=2)
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / (D // self.h) ** 0.5
        mask = torch.ones(T, T, dtype=torch.bool).tril()[None, None]
        if keep is not None:
            mask = mask & keep[:, None, None, :]
        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
        att = scores.softmax(-1)
        out = torch.einsum("bhqk,bkhd->bqhd", att, v).reshape(B, T, D)
        return self.proj(out)


class FeedForward(nn.Module):
    def __init__(self, d_model, ffn_dim):
        super().__init__()
        self.fc1 = nn.Linear(d_model, ffn_dim)
        self.fc2 = nn.Linear(ffn_dim, d_model)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


class TransformerBlock(nn.Module):
    def __init__(self, d_model, num_heads, ffn_dim):
        super().__init__()
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = CausalSelfAttention(d_model, num_heads)
        self.ln2 = nn.LayerNorm(d_model)
        self.ffn = FeedForward(d_model, ffn_dim)

    def forward(self, x, keep=None):
        x = x + self.attn(self.ln1(x), keep=keep)
        return x + self.ffn(self.ln2(x))
