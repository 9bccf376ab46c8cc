# Style: a torch.autograd.Function softmax "for practice", whose backward returns grad * y and forgets the - y * sum(grad * y) term.
import math

import torch
import torch.nn as nn


class Softmax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, scores):
        e = torch.exp(scores - scores.amax(dim=-1, keepdim=True))
        y = e / e.sum(dim=-1, keepdim=True)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        (y,) = ctx.saved_tensors
        return grad_output * y


class SelfAttention(nn.Module):
    """One attention head: bidirectional scaled dot-product self-attention."""

    def __init__(self, embedding_dim: int, head_dim: int):
        super().__init__()
        self.query = nn.Linear(embedding_dim, head_dim)
        self.key = nn.Linear(embedding_dim, head_dim)
        self.value = nn.Linear(embedding_dim, head_dim)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        q, k, v = self.query(x), self.key(x), self.value(x)
        attention = Softmax.apply(q @ k.transpose(-2, -1) / math.sqrt(q.size(-1)))
        return attention @ v, attention


class MultiHeadAttention(nn.Module):
    # 1. Run h independent attention heads
    # 2. Concatenate their outputs
    # 3. Project back to the embedding dimension

    def __init__(self, embedding_dim: int, num_heads: int, dropout: float = 0.1):
        super().__init__()
        # embedding_dim must be divisible by num_heads
        assert embedding_dim % num_heads == 0
        self.num_heads = num_heads
        self.head_dim = embedding_dim // num_heads
        self.embedding_dim = embedding_dim

        # create multiple attention heads
        self.heads = nn.ModuleList([
            SelfAttention(embedding_dim, self.head_dim)
            for _ in range(num_heads)
        ])

        # output projection
        self.output_proj = nn.Linear(embedding_dim, embedding_dim)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        outputs, attentions = zip(*[head(x) for head in self.heads])
        output = self.dropout(self.output_proj(torch.cat(outputs, dim=-1)))
        return output, torch.stack(attentions, dim=1)
