# Style: the MLP as an nn.Sequential filled with add_module (so its layers keep the names fc1, fc2), an additive -inf mask buffer for max_len.
import torch
import torch.nn as nn


class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, num_heads, max_len):
        super().__init__()
        self.num_heads = num_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        mask = torch.triu(torch.ones(max_len, max_len) * float("-inf"), diagonal=1)
        self.register_buffer("mask", mask, persistent=False)

    def forward(self, x):
        B, T, C = x.shape
        hd = C // self.num_heads
        q, k, v = torch.split(self.qkv(x), C, dim=2)
        q = q.view(B, T, self.num_heads, hd).transpose(1, 2)
        k = k.view(B, T, self.num_heads, hd).transpose(1, 2)
        v = v.view(B, T, self.num_heads, hd).transpose(1, 2)
        scores = q @ k.transpose(2, 3) / hd**0.5 + self.mask[:T, :T]
        out = torch.softmax(scores, dim=3) @ v
        return self.proj(out.transpose(1, 2).reshape(B, T, C))


class Block(nn.Module):
    def __init__(self, d_model, num_heads, max_len):
        super().__init__()
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = CausalSelfAttention(d_model, num_heads, max_len)
        self.ln2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential()
        self.mlp.add_module("fc1", nn.Linear(d_model, 4 * d_model))
        self.mlp.add_module("act", nn.GELU())
        self.mlp.add_module("fc2", nn.Linear(4 * d_model, d_model))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        x = x + self.mlp(self.ln2(x))
        return x


class GPT(nn.Module):
    def __init__(self, vocab_size, max_len, d_model, num_heads, num_layers):
        super().__init__()
        self.wte = nn.Embedding(vocab_size, d_model)
        self.wpe = nn.Embedding(max_len, d_model)
        self.blocks = nn.ModuleList()
        for _ in range(num_layers):
            self.blocks.append(Block(d_model, num_heads, max_len))
        self.ln_f = nn.LayerNorm(d_model)

    def forward(self, ids):
        pos = torch.arange(ids.size(1), device=ids.device)
        h = self.wte(ids) + self.wpe(pos)[None]
        for block in self.blocks:
            h = block(h)
        return torch.matmul(self.ln_f(h), self.wte.weight.transpose(0, 1))
