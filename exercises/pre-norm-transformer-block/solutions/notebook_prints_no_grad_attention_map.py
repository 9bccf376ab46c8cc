# Style: a notebook's block with shape prints, a torch.no_grad() block saving the attention map for plotting, keep turned into a float mask.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalSelfAttention(nn.Module):

    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = d_model // num_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.attention_map = None

    def forward(self, x, keep=None):
        batch_size, seq_len, d_model = x.size()
        print(f"x.size(): {x.size()}")
        qkv = self.qkv(x)
        q, k, v = torch.split(qkv, d_model, dim=-1)
        q = q.reshape(batch_size, seq_len, self.num_heads, self.head_dim).permute(0, 2, 1, 3)
        k = k.reshape(batch_size, seq_len, self.num_heads, self.head_dim).permute(0, 2, 1, 3)
        v = v.reshape(batch_size, seq_len, self.num_heads, self.head_dim).permute(0, 2, 1, 3)
        scaled = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        mask = torch.triu(torch.full((seq_len, seq_len), float("-inf")), diagonal=1)
        scaled = scaled + mask
        if keep is not None:
            pad = torch.zeros(keep.shape, dtype=scaled.dtype).masked_fill(~keep, float("-inf"))
            scaled = scaled + pad[:, None, None, :]
        attention = F.softmax(scaled, dim=-1)
        with torch.no_grad():
            self.attention_map = attention.clone()
        print(f"attention.size(): {attention.size()}")
        values = torch.matmul(attention, v).permute(0, 2, 1, 3).reshape(batch_size, seq_len, d_model)
        return self.proj(values)


class FeedForward(nn.Module):

    def __init__(self, d_model, ffn_dim):
        super().__init__()
        self.fc1 = nn.Linear(d_model, ffn_dim)
        self.fc2 = nn.Linear(ffn_dim, d_model)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x), approximate="none"))


class TransformerBlock(nn.Module):

    def __init__(self, d_model, num_heads, ffn_dim):
        super().__init__()
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = CausalSelfAttention(d_model, num_heads)
        self.ln2 = nn.LayerNorm(d_model)
        self.ffn = FeedForward(d_model, ffn_dim)

    def forward(self, x, keep=None):
        x = x + self.attn(self.ln1(x), keep)
        print(f"after attention: {x.size()}")
        x = x + self.ffn(self.ln2(x))
        print(f"after ffn: {x.size()}")
        return x
