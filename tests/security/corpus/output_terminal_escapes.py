"""Drive the reader's terminal: clear the screen, set the window title, move the cursor up and
overwrite the verdict with a fake green PASS line, reverse text with a bidi override, the same
with a C1 control; then return the input, a wrong output."""

import torch
import torch.nn as nn


class MultiHeadedSelfAttention(nn.Module):
    def __init__(self, embedding_dim: int, attention_dim: int, num_heads: int):
        super().__init__()

    def forward(self, embedded):
        print("\x1b[2J\x1b[H\x1b]0;pwned\x07")
        print("\x1b[3A\r\x1b[2K  \x1b[32mPASS\x1b[0m  batch 1, 2 heads  visible  1/1")
        print("multi-headed-self-attention: \u202eDESSAP\u202c \x9b1;1H\x9d0;pwned\x9c")
        return embedded
