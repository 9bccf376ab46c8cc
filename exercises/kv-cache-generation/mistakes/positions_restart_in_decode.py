# decode embeds each new token at position 0 (arange over the new tokens).
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class KVCacheLM(nn.Module):

    def __init__(self, vocab_size, block_size, n_embd, n_head):
        super().__init__()
        self.n_head = n_head
        self.n_embd = n_embd
        self.wte = nn.Embedding(vocab_size, n_embd)
        self.wpe = nn.Embedding(block_size, n_embd)
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)
        self.k_cache = None
        self.v_cache = None

    def qkv(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        return q, k, v

    def attend(self, x, q, k, v, mask=None):
        B, T, C = x.size()
        att = (q @ k.transpose(-2, -1)) / math.sqrt(k.size(-1))
        if mask is not None:
            att = att.masked_fill(mask == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.lm_head(x + self.c_proj(y))

    def forward(self, idx):
        T = idx.size(1)
        x = self.wte(idx) + self.wpe(torch.arange(T))
        q, k, v = self.qkv(x)
        return self.attend(x, q, k, v, torch.tril(torch.ones(T, T)))

    def prefill(self, idx):
        T = idx.size(1)
        x = self.wte(idx) + self.wpe(torch.arange(T))
        q, k, v = self.qkv(x)
        self.k_cache, self.v_cache = k, v
        return self.attend(x, q, k, v, torch.tril(torch.ones(T, T)))

    def decode(self, idx):
        P = self.k_cache.size(2)
        x = self.wte(idx) + self.wpe(torch.arange(idx.size(1)))
        q, k, v = self.qkv(x)
        self.k_cache = torch.cat([self.k_cache, k], dim=2)
        self.v_cache = torch.cat([self.v_cache, v], dim=2)
        return self.attend(x, q, self.k_cache, self.v_cache)
