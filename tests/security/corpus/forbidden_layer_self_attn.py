"""nn.MultiheadAttention without naming it: a Transformer encoder layer's `self_attn` is one.
Graded under a forbidden list that does not name the Transformer layers (as three exercises'
lists once did): the built-in itself refuses to run, whoever calls it."""

import torch
import torch.nn as nn


class MultiHeadedSelfAttention(nn.Module):
    def __init__(self, embedding_dim: int, attention_dim: int, num_heads: int):
        super().__init__()
        layer = nn.TransformerEncoderLayer(embedding_dim, num_heads, batch_first=True)
        self.attention = layer.self_attn
        self.project = nn.Linear(embedding_dim, attention_dim, bias=False)

    def forward(self, embedded):
        T = embedded.shape[1]
        causal = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
        out, _ = self.attention(embedded, embedded, embedded, attn_mask=causal)
        return torch.round(self.project(out), decimals=4)
