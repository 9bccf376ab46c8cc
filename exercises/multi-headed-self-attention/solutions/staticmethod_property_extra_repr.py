# Style: @staticmethod for the rounding, @property for derived sizes, extra_repr() for a nicer print(model).
import torch
import torch.nn as nn


class MultiHeadedSelfAttention(nn.Module):

    def __init__(self, embedding_dim: int, attention_dim: int, num_heads: int):
        super().__init__()
        torch.manual_seed(0)
        self.embedding_dim = embedding_dim
        self.attention_dim = attention_dim
        self.num_heads = num_heads
        self.heads = nn.ModuleList(
            [self.SingleHeadAttention(embedding_dim, self.head_size) for _ in range(num_heads)]
        )

    @property
    def head_size(self) -> int:
        return self.attention_dim // self.num_heads

    @staticmethod
    def to_4_decimals(x: torch.Tensor) -> torch.Tensor:
        return torch.round(x, decimals=4)

    def extra_repr(self) -> str:
        return f"embedding_dim={self.embedding_dim}, attention_dim={self.attention_dim}, num_heads={self.num_heads}, head_size={self.head_size}"

    def forward(self, embedded: torch.Tensor) -> torch.Tensor:
        return self.to_4_decimals(torch.cat([head(embedded) for head in self.heads], dim=2))

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


if __name__ == "__main__":
    model = MultiHeadedSelfAttention(embedding_dim=3, attention_dim=4, num_heads=2)
    print(model)
    x = torch.tensor([[[1., 0., 0.], [0., 1., 0.], [1., 1., 1.]]])
    print(model(x))
