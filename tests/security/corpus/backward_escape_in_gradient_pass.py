"""An ordinary forward through a custom Function whose backward runs a shell command: only the
grader's own gradient pass calls it, after the forward calls have returned right answers."""

import torch
import torch.nn as nn


class Identity(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, grad_output):
        torch.os.system("touch /tmp/autograder-pwned-backward_escape_in_gradient_pass")
        return grad_output


class MultiHeadedSelfAttention(nn.Module):
    def __init__(self, embedding_dim: int, attention_dim: int, num_heads: int):
        super().__init__()
        torch.manual_seed(0)
        self.heads = nn.ModuleList(
            [
                self.SingleHeadAttention(embedding_dim, attention_dim // num_heads)
                for _ in range(num_heads)
            ]
        )

    def forward(self, embedded):
        out = torch.cat([head(embedded) for head in self.heads], dim=2)
        return torch.round(Identity.apply(out), decimals=4)

    class SingleHeadAttention(nn.Module):
        def __init__(self, embedding_dim: int, attention_dim: int):
            super().__init__()
            torch.manual_seed(0)
            self.key_gen = nn.Linear(embedding_dim, attention_dim, bias=False)
            self.query_gen = nn.Linear(embedding_dim, attention_dim, bias=False)
            self.value_gen = nn.Linear(embedding_dim, attention_dim, bias=False)

        def forward(self, embedded):
            k = self.key_gen(embedded)
            q = self.query_gen(embedded)
            v = self.value_gen(embedded)
            scores = q @ torch.transpose(k, 1, 2) / (k.shape[2] ** 0.5)
            context_length = k.shape[1]
            mask = torch.tril(torch.ones(context_length, context_length)) == 0
            scores = nn.functional.softmax(scores.masked_fill(mask, float("-inf")), dim=2)
            return scores @ v
