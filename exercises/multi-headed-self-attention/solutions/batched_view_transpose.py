# Style: all heads at once: the heads' weights concatenated into one matrix, then view/transpose into (B, H, T, hs), masked_fill with -1e9, F.softmax, redundant .contiguous().
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class MultiHeadedSelfAttention(nn.Module):

    def __init__(self, embedding_dim: int, attention_dim: int, num_heads: int):
        super().__init__()
        torch.manual_seed(0)
        self.num_heads = num_heads
        self.head_size = attention_dim // num_heads
        # still create the heads exactly like the starter says, so the weights are the same
        self.heads = nn.ModuleList([self.SingleHeadAttention(embedding_dim, self.head_size) for _ in range(num_heads)])

    def forward(self, embedded: torch.Tensor) -> torch.Tensor:
        B, T, C = embedded.shape
        H, hs = self.num_heads, self.head_size

        # stack every head's projection: (H*hs, C)
        Wk = torch.cat([h.key_gen.weight for h in self.heads], dim=0)
        Wq = torch.cat([h.query_gen.weight for h in self.heads], dim=0)
        Wv = torch.cat([h.value_gen.weight for h in self.heads], dim=0)

        k = (embedded @ Wk.T).view(B, T, H, hs).transpose(1, 2)  # (B, H, T, hs)
        q = (embedded @ Wq.T).view(B, T, H, hs).transpose(1, 2)
        v = (embedded @ Wv.T).view(B, T, H, hs).transpose(1, 2)

        att = (q @ k.transpose(-2, -1)) / math.sqrt(hs)  # (B, H, T, T)
        causal = torch.tril(torch.ones(T, T)) == 0
        att = att.masked_fill(causal, -1e9)
        att = F.softmax(att, dim=-1)

        y = att @ v  # (B, H, T, hs)
        y = y.transpose(1, 2).contiguous().view(B, T, H * hs).contiguous()
        return torch.round(y, decimals=4)

    class SingleHeadAttention(nn.Module):
        def __init__(self, embedding_dim: int, attention_dim: int):
            super().__init__()
            torch.manual_seed(0)
            self.key_gen = nn.Linear(embedding_dim, attention_dim, bias=False)
            self.query_gen = nn.Linear(embedding_dim, attention_dim, bias=False)
            self.value_gen = nn.Linear(embedding_dim, attention_dim, bias=False)

        def forward(self, embedded: torch.Tensor) -> torch.Tensor:
            k = self.key_gen(embedded)
            q = self.query_gen(embedded)
            v = self.value_gen(embedded)

            scores = q @ torch.transpose(k, 1, 2) # @ is the same as torch.matmul()
            context_length, attention_dim = k.shape[1], k.shape[2]
            scores = scores / (attention_dim ** 0.5)

            lower_triangular = torch.tril(torch.ones(context_length, context_length))
            mask = lower_triangular == 0
            scores = scores.masked_fill(mask, float('-inf'))
            scores = nn.functional.softmax(scores, dim = 2)

            return scores @ v
