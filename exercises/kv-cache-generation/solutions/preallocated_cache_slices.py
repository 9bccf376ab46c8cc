# Style: a cache preallocated to block_size at prefill and written in place by slice assignment, a position counter; attention over the filled part only.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class KVCacheLM(nn.Module):

    def __init__(self, vocab_size, block_size, n_embd, n_head):
        super().__init__()
        self.block_size = block_size
        self.n_head = n_head
        self.head_size = n_embd // n_head
        self.wte = nn.Embedding(vocab_size, n_embd)
        self.wpe = nn.Embedding(block_size, n_embd)
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)
        self.cache_k = None
        self.cache_v = None
        self.pos = 0

    def heads(self, x):
        B, T, C = x.shape
        q, k, v = self.c_attn(x).chunk(3, dim=-1)
        return [t.reshape(B, T, self.n_head, self.head_size).permute(0, 2, 1, 3) for t in (q, k, v)]

    def attend(self, q, k, v, mask=None):
        w = q @ k.transpose(2, 3) / math.sqrt(self.head_size)
        if mask is not None:
            w = w.masked_fill(mask, float("-inf"))
        out = torch.softmax(w, dim=-1) @ v
        B, H, T, D = out.shape
        return out.permute(0, 2, 1, 3).reshape(B, T, H * D)

    def forward(self, idx):
        T = idx.shape[1]
        x = self.wte(idx) + self.wpe.weight[:T]
        q, k, v = self.heads(x)
        mask = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
        return self.lm_head(x + self.c_proj(self.attend(q, k, v, mask)))

    def prefill(self, idx):
        B, T = idx.shape
        self.cache_k = torch.zeros(B, self.n_head, self.block_size, self.head_size)
        self.cache_v = torch.zeros(B, self.n_head, self.block_size, self.head_size)
        self.pos = 0
        x = self.wte(idx) + self.wpe.weight[:T]
        q, k, v = self.heads(x)
        self.cache_k[:, :, :T] = k
        self.cache_v[:, :, :T] = v
        self.pos = T
        mask = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
        return self.lm_head(x + self.c_proj(self.attend(q, k, v, mask)))

    def decode(self, idx):
        p = self.pos
        x = self.wte(idx) + self.wpe.weight[p : p + 1]
        q, k, v = self.heads(x)
        self.cache_k[:, :, p : p + 1] = k
        self.cache_v[:, :, p : p + 1] = v
        self.pos = p + 1
        y = self.attend(q, self.cache_k[:, :, : p + 1], self.cache_v[:, :, : p + 1])
        return self.lm_head(x + self.c_proj(y))
