"""A tensor hook, which the autograd engine calls in the middle of a backward pass, that runs a
shell command through `torch.os`."""

import torch
import torch.nn as nn


class MultiHeadedSelfAttention(nn.Module):
    def __init__(self, embedding_dim: int, attention_dim: int, num_heads: int):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(1))

    def forward(self, embedded):
        with torch.enable_grad():
            out = embedded * self.scale
            out.register_hook(
                lambda grad: torch.os.system("touch /tmp/autograder-pwned-backward_hook_forbidden")
            )
            out.sum().backward()
        return out.detach()
