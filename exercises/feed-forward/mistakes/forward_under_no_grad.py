import torch
import torch.nn as nn
import torch.nn.functional as F


class FeedForward(nn.Module):
    def __init__(self, d_model, expansion=4, dropout=0.1):
        super().__init__()
        self.fc1 = nn.Linear(d_model, expansion * d_model)
        self.fc2 = nn.Linear(expansion * d_model, d_model)
        self.dropout = nn.Dropout(dropout)

    @torch.no_grad()
    def forward(self, x):
        return self.dropout(self.fc2(F.gelu(self.fc1(x))))
