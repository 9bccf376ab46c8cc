# Style: nanoGPT's head: a block_size tril mask kept with register_buffer("tril", ...) and sliced to [:T, :T], wei/masked_fill/F.softmax names.
import torch
import torch.nn as nn
import torch.nn.functional as F

block_size = 256  # longest context the mask covers


class MultiHeadedSelfAttention(nn.Module):

    def __init__(self, embedding_dim: int, attention_dim: int, num_heads: int):
        super().__init__()
        torch.manual_seed(0)
        head_size = attention_dim // num_heads
        self.heads = nn.ModuleList([self.SingleHeadAttention(embedding_dim, head_size) for _ in range(num_heads)])

    def forward(self, embedded: torch.Tensor) -> torch.Tensor:
        out = torch.cat([h(embedded) for h in self.heads], dim=-1)
        return torch.round(out, decimals=4)

    class SingleHeadAttention(nn.Module):
        def __init__(self, embedding_dim: int, attention_dim: int):
            super().__init__()
            torch.manual_seed(0)
            self.key_gen = nn.Linear(embedding_dim, attention_dim, bias=False)
            self.query_gen = nn.Linear(embedding_dim, attention_dim, bias=False)
            self.value_gen = nn.Linear(embedding_dim, attention_dim, bias=False)
            self.register_buffer("tril", torch.tril(torch.ones(block_size, block_size)))

        def forward(self, embedded: torch.Tensor) -> torch.Tensor:
            B, T, C = embedded.shape
            k = self.key_gen(embedded)
            q = self.query_gen(embedded)
            wei = q @ k.transpose(-2, -1) * k.shape[-1] ** -0.5
            wei = wei.masked_fill(self.tril[:T, :T] == 0, float('-inf'))
            wei = F.softmax(wei, dim=-1)
            v = self.value_gen(embedded)
            return wei @ v
