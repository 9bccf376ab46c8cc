# Style: a hand-written softmax that clamps the scores to at most 50 before torch.exp "so it cannot overflow", instead of subtracting the max.
import torch
import torch.nn as nn


class MultiHeadedSelfAttention(nn.Module):

    def __init__(self, embedding_dim: int, attention_dim: int, num_heads: int):
        super().__init__()
        torch.manual_seed(0)
        head_size = attention_dim // num_heads
        self.att_heads = nn.ModuleList()
        for i in range(num_heads):
            self.att_heads.append(self.SingleHeadAttention(embedding_dim, head_size))
        self.output_proj = nn.Linear(attention_dim, attention_dim, bias=False)

    def forward(self, embedded: torch.Tensor) -> torch.Tensor:
        concatenated = torch.cat([head(embedded) for head in self.att_heads], dim=2)
        return torch.round(self.output_proj(concatenated), decimals=4)

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

            scores = q @ torch.transpose(k, 1, 2)
            context_length, attention_dim = k.shape[1], k.shape[2]
            scores = scores / (attention_dim ** 0.5)

            lower_triangular = torch.tril(torch.ones(context_length, context_length))
            scores = scores.masked_fill(lower_triangular == 0, float('-inf'))
            e = torch.exp(torch.clamp(scores, max=50))  # clamp so exp can't overflow
            weights = e / e.sum(dim=2, keepdim=True)

            return weights @ v
