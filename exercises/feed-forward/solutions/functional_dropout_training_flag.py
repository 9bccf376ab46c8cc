import torch
import torch.nn as nn
import torch.nn.functional as F


class FeedForward(nn.Module):
    def __init__(self, d_model: int, expansion: int = 4, dropout: float = 0.1):
        super().__init__()
        hidden = expansion * d_model
        self.fc1 = nn.Linear(d_model, hidden)
        self.fc2 = nn.Linear(hidden, d_model)
        self.p = dropout

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.dropout(self.fc2(F.gelu(self.fc1(x))), p=self.p, training=self.training)
