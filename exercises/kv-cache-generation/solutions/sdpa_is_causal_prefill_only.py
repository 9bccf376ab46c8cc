# Style: F.scaled_dot_product_attention everywhere: is_causal=True for the prompt, no mask for a decoded token (it sees the whole cache).
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
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        return (t.view(B, T, self.n_head, -1).transpose(1, 2) for t in (q, k, v))

    def out(self, x, y):
        B, T, C = x.shape
        return self.lm_head(x + self.c_proj(y.transpose(1, 2).reshape(B, T, C)))

    def forward(self, idx):
        x = self.wte(idx) + self.wpe(torch.arange(idx.shape[1]))
        q, k, v = self.qkv(x)
        return self.out(x, F.scaled_dot_product_attention(q, k, v, is_causal=True))

    def prefill(self, idx):
        x = self.wte(idx) + self.wpe(torch.arange(idx.shape[1]))
        q, k, v = self.qkv(x)
        self.k_cache, self.v_cache = k, v
        return self.out(x, F.scaled_dot_product_attention(q, k, v, is_causal=True))

    def decode(self, idx):
        T_past = self.k_cache.shape[2]
        x = self.wte(idx) + self.wpe(torch.tensor([T_past]))
        q, k, v = self.qkv(x)
        self.k_cache = torch.cat([self.k_cache, k], dim=2)
        self.v_cache = torch.cat([self.v_cache, v], dim=2)
        return self.out(x, F.scaled_dot_product_attention(q, self.k_cache, self.v_cache))
