import math
import torch
from torch import nn
import numpy as np


def gelu(x):
    # GELU(x) = x * Phi(x), Phi = CDF of N(0, 1)
    return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))


class FeedForward(nn.Module):

    def __init__(self, d_model, expansion=4, dropout=0.1):
        super(FeedForward, self).__init__()
        self.d_model = d_model
        self.d_ff = d_model * expansion
        self.fc1 = nn.Linear(self.d_model, self.d_ff)
        self.fc2 = nn.Linear(self.d_ff, self.d_model)
        self.drop = nn.Dropout(p=dropout, inplace=True)

    def forward(self, x):
        print("x:", x.shape)
        h = gelu(self.fc1(x))
        print("h:", h.shape)
        out = self.fc2(h)
        if self.training:
            out = self.drop(out)
        print("out:", out.shape)
        return out


if __name__ == "__main__":
    model = FeedForward(8)
    x = torch.randn(2, 5, 8)
    print(model(x).shape)
