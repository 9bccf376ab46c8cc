import torch
import torch.nn as nn
import torch.nn.functional as F


class FeedForward(nn.Module):
    def __init__(self, d_model, expansion=4, dropout=0.1):
        super().__init__()
        self.fc1 = nn.Linear(d_model, expansion * d_model)
        self.fc2 = nn.Linear(expansion * d_model, d_model)
        self.dropout = dropout

    def forward(self, x):
        x = F.gelu(self.fc1(x))
        x = self.fc2(x)
        return F.dropout(x, self.dropout)
