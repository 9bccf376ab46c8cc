# Style: the GPT-2 code's GELU written by hand (the tanh approximation, within 1e-5 of the exact one here), masked_fill of -inf, the block's forward as one method with shape comments.
import math

import torch
import torch.nn as nn


def new_gelu(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)


class FeedForward(nn.Module):
    def __init__(self, d_model, ffn_dim):
        super().__init__()
        self.fc1 = nn.Linear(d_model, ffn_dim)
        self.fc2 = nn.Linear(ffn_dim, d_model)


class TransformerBlock(nn.Module):
    def __init__(self, d_model, num_heads, ffn_dim):
        super().__init__()
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = CausalSelfAttention(d_model, num_heads)
        self.ln2 = nn.LayerNorm(d_model)
        self.ffn = FeedForward(d_model, ffn_dim)

    def forward(self, x, keep=None):
        B, T, D = x.shape
        H = self.attn.num_heads
        h = self.ln1(x)
        q, k, v = self.attn.qkv(h).split(D, dim=-1)               # (B, T, D) each
        q = q.view(B, T, H, D // H).transpose(1, 2)                # (B, H, T, hd)
        k = k.view(B, T, H, D // H).transpose(1, 2)
        v = v.view(B, T, H, D // H).transpose(1, 2)
        att = q @ k.transpose(-2, -1) / math.sqrt(D // H)          # (B, H, T, T)
        causal = torch.tril(torch.ones(T, T)).bool()
        att = att.masked_fill(~causal, -math.inf)
        if keep is not None:
            att = att.masked_fill(keep[:, None, None, :] == False, -math.inf)  # noqa: E712
        att = torch.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).reshape(B, T, D)            # (B, T, D)
        x = x + self.attn.proj(y)
        x = x + self.ffn.fc2(new_gelu(self.ffn.fc1(self.ln2(x))))
        return x
