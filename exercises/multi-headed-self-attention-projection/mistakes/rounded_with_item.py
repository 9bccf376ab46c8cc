# Style: rounding done element by element in Python, round(x.item(), 4) in nested loops, and the result rebuilt with torch.tensor.
import torch
import torch.nn as nn


class MultiHeadedSelfAttention(nn.Module):

    def __init__(self, embedding_dim: int, attention_dim: int, num_heads: int):
        super().__init__()
        torch.manual_seed(0)
        self.att_heads = nn.ModuleList(
            [self.SingleHeadAttention(embedding_dim, attention_dim // num_heads) for _ in range(num_heads)]
        )
        self.output_proj = nn.Linear(attention_dim, attention_dim, bias=False)

    def forward(self, embedded: torch.Tensor) -> torch.Tensor:
        out = self.output_proj(torch.cat([head(embedded) for head in self.att_heads], dim=2))
        rounded = []
        for batch in out:
            rows = []
            for row in batch:
                rows.append([round(x.item(), 4) for x in row])
            rounded.append(rows)
        return torch.tensor(rounded)

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
