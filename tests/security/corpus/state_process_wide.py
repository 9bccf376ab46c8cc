"""Change what the policy lets a submission change process-wide (RNG, grad mode, a hook) and hope the next submission inherits it."""

import torch
import torch.nn as nn


class MultiHeadedSelfAttention(nn.Module):
    def __init__(self, embedding_dim: int, attention_dim: int, num_heads: int):
        super().__init__()

    def forward(self, embedded):
        torch.manual_seed(12345)
        torch.set_grad_enabled(True)
        self.register_forward_hook(lambda module, inputs, output: output * 0)
        return embedded
