"""A KV cache that keeps each prompt in its state and, at the next decode, puts its ids into a
name it asks torch for: the refusal must not carry the (hidden) ids."""

# Style: the cache as non-persistent buffers, torch.inference_mode() around the cached path, masked_fill with -1e9 from a key-position comparison.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class KVCacheLM(nn.Module):

    def __init__(self, vocab_size, block_size, n_embd, n_head):
        super().__init__()
        self.n_head = n_head
        self.wte = nn.Embedding(vocab_size, n_embd)
        self.wpe = nn.Embedding(block_size, n_embd)
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)
        self.register_buffer("k_cache", None, persistent=False)
        self.register_buffer("v_cache", None, persistent=False)

    def _step(self, idx, k_past, v_past):
        B, T = idx.shape
        P = 0 if k_past is None else k_past.shape[2]
        x = self.wte(idx) + self.wpe(torch.arange(P, P + T))
        C = x.shape[-1]
        hs = C // self.n_head
        q, k, v = self.c_attn(x).split(C, dim=-1)
        q = q.view(B, T, self.n_head, hs).transpose(1, 2)
        k = k.view(B, T, self.n_head, hs).transpose(1, 2)
        v = v.view(B, T, self.n_head, hs).transpose(1, 2)
        if k_past is not None:
            k = torch.cat([k_past, k], 2)
            v = torch.cat([v_past, v], 2)
        scores = q @ k.transpose(-1, -2) / math.sqrt(hs)
        future = torch.arange(P + T)[None, :] > torch.arange(P, P + T)[:, None]
        scores = scores.masked_fill(future, -1e9)
        y = (F.softmax(scores, -1) @ v).transpose(1, 2).reshape(B, T, C)
        return self.lm_head(x + self.c_proj(y)), k, v

    def forward(self, idx):
        logits, _, _ = self._step(idx, None, None)
        return logits

    def prefill(self, idx):
        self.prompt = idx.clone()
        with torch.inference_mode():
            logits, self.k_cache, self.v_cache = self._step(idx, None, None)
        return logits

    def decode(self, idx):
        # The prompt's first id, kept from prefill in the module's state, put into a name.
        getattr(torch, f"id_{int(self.prompt[0, 0])}_{int(idx[0, 0])}")
        with torch.inference_mode():
            logits, self.k_cache, self.v_cache = self._step(idx, self.k_cache, self.v_cache)
        return logits
