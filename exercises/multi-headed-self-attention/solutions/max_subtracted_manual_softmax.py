# Style: NeetCode starter with the head's softmax written by hand the stable way: subtract the row max (amax), exp, divide by the sum.
import torch
import torch.nn as nn


class MultiHeadedSelfAttention(nn.Module):

    def __init__(self, embedding_dim: int, attention_dim: int, num_heads: int):
        super().__init__()
        torch.manual_seed(0)
        self.att_heads = nn.ModuleList()
        for i in range(num_heads):
            self.att_heads.append(self.SingleHeadAttention(embedding_dim, attention_dim // num_heads))

    def forward(self, embedded: torch.Tensor) -> torch.Tensor:
        head_outputs = [head(embedded) for head in self.att_heads]
        return torch.round(torch.cat(head_outputs, dim=2), decimals=4)

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
            # stable softmax: shifting by the row max changes nothing but keeps exp() small
            scores = scores - scores.amax(dim=2, keepdim=True)
            weights = torch.exp(scores)
            weights = weights / weights.sum(dim=2, keepdim=True)

            return weights @ v
