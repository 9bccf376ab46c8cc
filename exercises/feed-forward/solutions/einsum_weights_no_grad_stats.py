import torch
import torch.nn as nn
import torch.nn.functional as F


class FeedForward(nn.Module):
    def __init__(self, d_model, expansion=4, dropout=0.1):
        super().__init__()
        self.fc1 = nn.Linear(d_model, expansion * d_model)
        self.fc2 = nn.Linear(expansion * d_model, d_model)
        self.dropout = nn.Dropout(dropout)
        self.reset_parameters()

    def reset_parameters(self):
        with torch.no_grad():
            for layer in (self.fc1, self.fc2):
                nn.init.normal_(layer.weight, std=0.02)
                nn.init.zeros_(layer.bias)

    def forward(self, x):
        # (b, t, d) x (f, d) -> (b, t, f)
        h = torch.einsum("btd,fd->btf", x, self.fc1.weight) + self.fc1.bias
        h = F.gelu(h)
        with torch.no_grad():
            dead = (h <= 0).float().mean()  # fraction of units off, for debugging
        if dead > 0.99:
            print("warning: almost every hidden unit is off")
        y = torch.einsum("btf,df->btd", h, self.fc2.weight) + self.fc2.bias
        return self.dropout(y)
