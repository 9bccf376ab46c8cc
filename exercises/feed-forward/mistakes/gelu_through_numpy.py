import math

import numpy as np
import torch
import torch.nn as nn

erf = np.vectorize(math.erf)


class FeedForward(nn.Module):
    def __init__(self, d_model, expansion=4, dropout=0.1):
        super().__init__()
        self.fc1 = nn.Linear(d_model, expansion * d_model)
        self.fc2 = nn.Linear(expansion * d_model, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        h = self.fc1(x).numpy()
        h = 0.5 * h * (1 + erf(h / np.sqrt(2)))
        h = torch.from_numpy(h.astype(np.float32))
        return self.dropout(self.fc2(h))
