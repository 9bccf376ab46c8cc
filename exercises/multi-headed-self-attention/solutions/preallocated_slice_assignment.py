# Style: output preallocated with torch.zeros and filled head by head with slice assignment out[:, :, i*h:(i+1)*h] = ...
import torch
import torch.nn as nn


class MultiHeadedSelfAttention(nn.Module):

    def __init__(self, embedding_dim: int, attention_dim: int, num_heads: int):
        super().__init__()
        torch.manual_seed(0)
        self.attention_dim = attention_dim
        self.head_size = attention_dim // num_heads
        self.heads = nn.ModuleList()
        for _ in range(num_heads):
            self.heads.append(self.SingleHeadAttention(embedding_dim, self.head_size))

    def forward(self, embedded: torch.Tensor) -> torch.Tensor:
        B, T, _ = embedded.shape
        h = self.head_size
        out = torch.zeros(B, T, self.attention_dim)
        for i, head in enumerate(self.heads):
            out[:, :, i*h:(i+1)*h] = head(embedded)
        # Return answer to 4 decimal places
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
