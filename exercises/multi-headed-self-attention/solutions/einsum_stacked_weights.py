# Style: einsum over the heads' stacked weights, a module-level _causal_mask(T) helper and an nn.Softmax(dim=-1) module.
import torch
import torch.nn as nn


def _causal_mask(T):
    # True where a query must NOT look (above the diagonal)
    return torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)


class MultiHeadedSelfAttention(nn.Module):

    def __init__(self, embedding_dim: int, attention_dim: int, num_heads: int):
        super().__init__()
        torch.manual_seed(0)
        self.heads = nn.ModuleList()
        for _ in range(num_heads):
            self.heads.append(self.SingleHeadAttention(embedding_dim, attention_dim // num_heads))
        self.softmax = nn.Softmax(dim=-1)  # no parameters, so the seeding is unaffected

    def forward(self, embedded: torch.Tensor) -> torch.Tensor:
        Wk = torch.stack([h.key_gen.weight for h in self.heads])    # (H, hs, C)
        Wq = torch.stack([h.query_gen.weight for h in self.heads])
        Wv = torch.stack([h.value_gen.weight for h in self.heads])
        k = torch.einsum("btc,hdc->bhtd", embedded, Wk)
        q = torch.einsum("btc,hdc->bhtd", embedded, Wq)
        v = torch.einsum("btc,hdc->bhtd", embedded, Wv)
        B, H, T, hs = q.shape
        scores = torch.einsum("bhtd,bhsd->bhts", q, k) * hs ** -0.5
        scores = scores.masked_fill(_causal_mask(T), float("-inf"))
        weights = self.softmax(scores)
        out = torch.einsum("bhts,bhsd->bthd", weights, v).reshape(B, T, H * hs)
        return torch.round(out, decimals=4)

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
