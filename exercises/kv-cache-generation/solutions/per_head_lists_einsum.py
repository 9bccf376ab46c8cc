# Style: a loop over heads with einsum, one list of cached key/value tensors per head, appended token by token and stacked when attending; a manual softmax with its max subtracted.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class KVCacheLM(nn.Module):

    def __init__(self, vocab_size, block_size, n_embd, n_head):
        super().__init__()
        self.n_head = n_head
        self.hs = n_embd // n_head
        self.wte = nn.Embedding(vocab_size, n_embd)
        self.wpe = nn.Embedding(block_size, n_embd)
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)
        self.reset_cache()

    def reset_cache(self):
        self.keys = [[] for _ in range(self.n_head)]
        self.values = [[] for _ in range(self.n_head)]

    def softmax(self, s):
        s = s - s.max(dim=-1, keepdim=True).values
        e = torch.exp(s)
        return e / e.sum(dim=-1, keepdim=True)

    def block(self, idx, start, cache):
        T = idx.shape[1]
        x = self.wte(idx) + self.wpe(torch.arange(start, start + T))
        C = x.shape[-1]
        qkv = self.c_attn(x)
        outs = []
        for h in range(self.n_head):
            q = qkv[..., h * self.hs:(h + 1) * self.hs]
            k = qkv[..., C + h * self.hs:C + (h + 1) * self.hs]
            v = qkv[..., 2 * C + h * self.hs:2 * C + (h + 1) * self.hs]
            if cache:
                for t in range(T):
                    self.keys[h].append(k[:, t].detach())
                    self.values[h].append(v[:, t].detach())
                k = torch.stack(self.keys[h], dim=1)
                v = torch.stack(self.values[h], dim=1)
            s = torch.einsum("bqd,bkd->bqk", q, k) / math.sqrt(self.hs)
            q_pos = torch.arange(start, start + T)[:, None]
            k_pos = torch.arange(k.shape[1])[None, :]
            s = s.masked_fill(k_pos > q_pos, float("-inf"))
            outs.append(torch.einsum("bqk,bkd->bqd", self.softmax(s), v))
        return self.lm_head(x + self.c_proj(torch.cat(outs, dim=-1)))

    def forward(self, idx):
        return self.block(idx, 0, cache=False)

    def prefill(self, idx):
        self.reset_cache()
        return self.block(idx, 0, cache=True)

    def decode(self, idx):
        return self.block(idx, len(self.keys[0]), cache=True)
