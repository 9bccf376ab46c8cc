import torch
import torch.nn as nn


class FeedForward(nn.Module):
    """GPT-2's MLP: c_fc, gelu, c_proj, dropout."""

    def __init__(self, d_model, expansion=4, dropout=0.1):
        super().__init__()
        self.fc1 = nn.Linear(d_model, expansion * d_model)
        self.gelu = nn.GELU()
        self.fc2 = nn.Linear(expansion * d_model, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        x = self.fc1(x)
        x = self.gelu(x)
        x = self.fc2(x)
        x = self.dropout(x)
        return x
