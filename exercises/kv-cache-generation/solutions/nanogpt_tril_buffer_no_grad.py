# Style: nanoGPT's CausalSelfAttention with its registered tril "bias" buffer, sliced at the cache's offset in decode; @torch.no_grad() on prefill and decode, the cache detached.
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
        self.register_buffer("bias", torch.tril(torch.ones(block_size, block_size)).view(1, 1, block_size, block_size))
        self.k_cache = None
        self.v_cache = None

    def _attn(self, x, past_k=None, past_v=None):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        if past_k is not None:
            k = torch.cat((past_k, k), dim=-2)
            v = torch.cat((past_v, v), dim=-2)
        L = k.size(-2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, L - T:L, :L] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y), k, v

    def forward(self, idx):
        b, t = idx.size()
        pos = torch.arange(0, t, dtype=torch.long)
        x = self.wte(idx) + self.wpe(pos)
        y, _, _ = self._attn(x)
        return self.lm_head(x + y)

    @torch.no_grad()
    def prefill(self, idx):
        self.k_cache = None
        self.v_cache = None
        return self.decode(idx)

    @torch.no_grad()
    def decode(self, idx):
        past = 0 if self.k_cache is None else self.k_cache.size(2)
        pos = torch.arange(past, past + idx.size(1), dtype=torch.long)
        x = self.wte(idx) + self.wpe(pos)
        y, k, v = self._attn(x, self.k_cache, self.v_cache)
        self.k_cache, self.v_cache = k.detach(), v.detach()
        return self.lm_head(x + y)
