# Style: private helpers: a module-level _round4 function, a self._num_heads attribute and _make_heads/_concat_heads methods.
import torch
import torch.nn as nn


def _round4(t):
    return torch.round(t, decimals=4)


class MultiHeadedSelfAttention(nn.Module):

    def __init__(self, embedding_dim: int, attention_dim: int, num_heads: int):
        super().__init__()
        torch.manual_seed(0)
        self._num_heads = num_heads
        self.heads = self._make_heads(embedding_dim, attention_dim // num_heads)
        self.proj = nn.Linear(attention_dim, attention_dim, bias=False)

    def _make_heads(self, embedding_dim, head_size):
        return nn.ModuleList([self.SingleHeadAttention(embedding_dim, head_size) for _ in range(self._num_heads)])

    def _concat_heads(self, embedded):
        return torch.cat([head(embedded) for head in self.heads], dim=-1)

    def forward(self, embedded):
        return _round4(self.proj(self._concat_heads(embedded)))

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
