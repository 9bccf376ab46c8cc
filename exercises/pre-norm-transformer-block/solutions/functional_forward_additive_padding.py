# Style: the modules only hold the weights; forward is functional (F.layer_norm, F.linear on the registered weights), a BERT-style additive padding mask (1 - keep) * -1e9 on top of a causal -inf mask.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


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
        self.d_model = d_model
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = CausalSelfAttention(d_model, num_heads)
        self.ln2 = nn.LayerNorm(d_model)
        self.ffn = FeedForward(d_model, ffn_dim)

    def _attend(self, h, keep):
        B, T, D = h.shape
        nh = self.attn.num_heads
        qkv = F.linear(h, self.attn.qkv.weight, self.attn.qkv.bias)
        q, k, v = (t.reshape(B, T, nh, D // nh).transpose(1, 2) for t in qkv.split(D, -1))
        scores = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(D // nh)
        future = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
        scores = scores.masked_fill(future, float("-inf"))
        if keep is not None:
            scores = scores + (1.0 - keep[:, None, None, :].to(scores.dtype)) * -1e9
        out = torch.matmul(F.softmax(scores, dim=-1), v).transpose(1, 2).reshape(B, T, D)
        return F.linear(out, self.attn.proj.weight, self.attn.proj.bias)

    def forward(self, x, keep=None):
        D = self.d_model
        x = x + self._attend(F.layer_norm(x, (D,), self.ln1.weight, self.ln1.bias, 1e-5), keep)
        h = F.layer_norm(x, (D,), self.ln2.weight, self.ln2.bias, 1e-5)
        h = F.gelu(F.linear(h, self.ffn.fc1.weight, self.ffn.fc1.bias))
        return x + F.linear(h, self.ffn.fc2.weight, self.ffn.fc2.bias)
