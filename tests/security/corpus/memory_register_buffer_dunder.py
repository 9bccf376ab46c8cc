"""A special name through a registration: `add_module`, `register_buffer` and the like set an
attribute under any name they are given, here `__array__`, computed so that the source does not
spell it: numpy would then call a module of the submission's choosing for any array made from
this one."""

import torch.nn as nn


class MultiHeadedSelfAttention(nn.Module):
    def __init__(self, embedding_dim: int, attention_dim: int, num_heads: int):
        super().__init__()
        name = "".join(["__", "array", "__"])
        self.add_module(name, nn.Identity())

    def forward(self, embedded):
        return embedded
