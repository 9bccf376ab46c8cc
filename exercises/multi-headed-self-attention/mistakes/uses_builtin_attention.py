import torch
import torch.nn as nn


class MultiHeadedSelfAttention(nn.Module):
    def __init__(self, embedding_dim, attention_dim, num_heads):
        super().__init__()
        self.attention = nn.MultiheadAttention(embedding_dim, num_heads, batch_first=True)

    def forward(self, embedded):
        return self.attention(embedded, embedded, embedded)[0]
