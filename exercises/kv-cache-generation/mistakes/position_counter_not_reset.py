# A position counter that prefill never sets back to 0: the second sequence's positions continue from the first's.
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
        self.pos = 0

    def forward(self, idx):
        B, T = idx.shape
        x = self.wte(idx) + self.wpe(torch.arange(T))
        return self.block(x, None, None)[0]

    def block(self, x, k_past, v_past):
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(C, dim=2)
        q, k, v = [t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v)]
        if k_past is not None:
            k = torch.cat([k_past, k], dim=2)
            v = torch.cat([v_past, v], dim=2)
        P = k.shape[2] - T
        att = q @ k.transpose(-2, -1) / math.sqrt(C // self.n_head)
        mask = torch.tril(torch.ones(T, P + T), diagonal=P)
        att = att.masked_fill(mask == 0, float("-inf")).softmax(dim=-1)
        y = (att @ v).transpose(1, 2).reshape(B, T, C)
        return self.lm_head(x + self.c_proj(y)), k, v

    def step(self, idx):
        T = idx.shape[1]
        x = self.wte(idx) + self.wpe(torch.arange(self.pos, self.pos + T))
        self.pos += T
        logits, self.k_cache, self.v_cache = self.block(x, self.k_cache, self.v_cache)
        return logits

    def prefill(self, idx):
        self.k_cache, self.v_cache = None, None
        return self.step(idx)

    def decode(self, idx):
        return self.step(idx)
