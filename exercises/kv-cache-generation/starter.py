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
        self.k_cache = None  # (batch, n_head, tokens so far, head_size)
        self.v_cache = None

    def forward(self, idx):
        # idx: (batch, seq_len) token ids -> logits (batch, seq_len, vocab_size), no cache
        raise NotImplementedError

    def prefill(self, idx):
        # a new sequence: forget the cache, run the prompt idx (batch, prompt_len), cache its
        # keys and values, return its logits (batch, prompt_len, vocab_size)
        raise NotImplementedError

    def decode(self, idx):
        # idx: (batch, 1), the next token, at position = tokens already cached; attend to the
        # cache and itself, append its key and value, return logits (batch, 1, vocab_size)
        raise NotImplementedError
