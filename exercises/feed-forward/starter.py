import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class FeedForward(nn.Module):

    def __init__(self, d_model, expansion=4, dropout=0.1):
        super().__init__()
        # fc1: d_model -> expansion * d_model; fc2: back to d_model; then dropout
        raise NotImplementedError

    def forward(self, x):
        # x: (batch, seq_len, d_model)
        # return: (batch, seq_len, d_model), fc1 -> exact GELU -> fc2 -> dropout
        raise NotImplementedError
