# Style: a notebook's loop over heads with a softmax written by hand (max subtracted), a tril mask rebuilt each call, and shape prints.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def softmax(x):
    x = x - x.max(dim=-1, keepdim=True).values
    e = torch.exp(x)
    return e / e.sum(dim=-1, keepdim=True)


class CausalSelfAttention(nn.Module):

    def __init__(self, d_model, num_heads):
        super().__init__()
        self.d_model = d_model
        self.num_heads = num_heads
        self.head_dim = d_model // num_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)

    def forward(self, x):
        T = x.shape[1]
        qkv = self.qkv(x)
        q_all = qkv[:, :, : self.d_model]
        k_all = qkv[:, :, self.d_model : 2 * self.d_model]
        v_all = qkv[:, :, 2 * self.d_model :]
        tril = torch.tril(torch.ones(T, T))
        heads = []
        for h in range(self.num_heads):
            sl = slice(h * self.head_dim, (h + 1) * self.head_dim)
            q, k, v = q_all[:, :, sl], k_all[:, :, sl], v_all[:, :, sl]
            wei = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)  # (B, T, T)
            wei = wei.masked_fill(tril == 0, float("-inf"))
            wei = softmax(wei)
            heads.append(wei @ v)
        out = torch.cat(heads, dim=-1)
        return self.proj(out)


class MLP(nn.Module):

    def __init__(self, d_model):
        super().__init__()
        self.fc1 = nn.Linear(d_model, 4 * d_model)
        self.fc2 = nn.Linear(4 * d_model, d_model)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


class Block(nn.Module):

    def __init__(self, d_model, num_heads):
        super().__init__()
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = CausalSelfAttention(d_model, num_heads)
        self.ln2 = nn.LayerNorm(d_model)
        self.mlp = MLP(d_model)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        x = x + self.mlp(self.ln2(x))
        return x


class GPT(nn.Module):

    def __init__(self, vocab_size, max_len, d_model, num_heads, num_layers):
        super().__init__()
        self.wte = nn.Embedding(vocab_size, d_model)
        self.wpe = nn.Embedding(max_len, d_model)
        self.blocks = nn.ModuleList([Block(d_model, num_heads) for _ in range(num_layers)])
        self.ln_f = nn.LayerNorm(d_model)

    def forward(self, ids):
        B, T = ids.shape
        print("ids:", ids.shape)
        tok = self.wte(ids)
        pos = self.wpe(torch.arange(T))
        x = tok + pos
        print("x:", x.shape)
        for i, block in enumerate(self.blocks):
            x = block(x)
            print(f"after block {i}:", x.shape)
        x = self.ln_f(x)
        logits = x @ self.wte.weight.T
        print("logits:", logits.shape)
        return logits
