# Style: Hugging Face's past_key_values: one function returns the logits and the "present" (k, v) tuple, the module keeps it; positions from the cache's length.
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
        self.past_key_values = None

    def split_heads(self, t):
        B, T, C = t.shape
        return t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)

    def run(self, idx, past_key_values=None, use_cache=False):
        past_length = 0 if past_key_values is None else past_key_values[0].shape[-2]
        T = idx.shape[1]
        position_ids = torch.arange(past_length, past_length + T).unsqueeze(0)
        hidden = self.wte(idx) + self.wpe(position_ids)
        q, k, v = map(self.split_heads, self.c_attn(hidden).split(self.n_embd, dim=2))
        if past_key_values is not None:
            k = torch.cat([past_key_values[0], k], dim=-2)
            v = torch.cat([past_key_values[1], v], dim=-2)
        present = (k, v) if use_cache else None
        query_pos = torch.arange(past_length, past_length + T).unsqueeze(1)
        key_pos = torch.arange(k.shape[-2]).unsqueeze(0)
        causal = key_pos <= query_pos
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
        scores = scores.masked_fill(~causal, torch.finfo(scores.dtype).min)
        attn_output = torch.matmul(scores.softmax(dim=-1), v)
        attn_output = attn_output.transpose(1, 2).reshape(hidden.shape)
        hidden = hidden + self.c_proj(attn_output)
        return self.lm_head(hidden), present

    def forward(self, idx):
        logits, _ = self.run(idx)
        return logits

    def prefill(self, idx):
        logits, self.past_key_values = self.run(idx, None, use_cache=True)
        return logits

    def decode(self, idx):
        logits, self.past_key_values = self.run(idx, self.past_key_values, use_cache=True)
        return logits
